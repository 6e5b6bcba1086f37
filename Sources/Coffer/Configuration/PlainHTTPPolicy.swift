import Foundation

/// When a plain `http://` server address may be used: a credential or token sent over it crosses
/// the network unencrypted, and whoever reads an app's credential can have every model key of its
/// team delivered to a key of their own. So plain HTTP goes only to this machine (loopback: a
/// local proxy, a test) unless it is explicitly allowed.
public enum PlainHTTPPolicy {
    /// The environment variable that allows plain HTTP to other hosts for the `coffer` CLI.
    public static let environmentVariable = "COFFER_ALLOW_INSECURE_HTTP"

    /// Why `url` must not be used, as one sentence; nil when it may (https, or http to loopback,
    /// or http anywhere when `allowed`).
    public static func refusal(_ url: URL, allowed: Bool) -> String? {
        guard url.scheme?.lowercased() == "http", !allowed, !isLoopback(url.host) else { return nil }
        return "\(url.host ?? "the server") is reached over plain http://, which would send the credential unencrypted "
            + "across the network; use https:// (plain http:// is allowed only to this machine, or with \(environmentVariable)=1 "
            + "in the CLI or allowsInsecureHTTP in the SDK, for a closed test network)"
    }

    /// Whether the environment allows plain HTTP to other hosts (`COFFER_ALLOW_INSECURE_HTTP=1`).
    public static func allowedByEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        ["1", "true", "yes"].contains(environment[environmentVariable]?.lowercased() ?? "")
    }

    /// `localhost`, an address in 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String?) -> Bool {
        guard var host = host?.lowercased() else { return false }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }
}
