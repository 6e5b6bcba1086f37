import Coffer
import Foundation

/// A server's base address (`http(s)://host[:port][/prefix]`) and the request URLs under it.
enum ServerAddress {
    /// Parses a `--server` value or COFFER_SERVER; trailing slashes are dropped.
    static func parse(_ text: String) throws -> URL {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let components = URLComponents(string: trimmed),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, components.user == nil, components.password == nil,
              let url = URL(string: trimmed)
        else {
            throw AdminFailure(.usage, "\(text) is not a server address such as https://coffer.example.com or http://127.0.0.1:8080")
        }
        // An API token or an app credential must not cross the network unencrypted.
        if let refusal = PlainHTTPPolicy.refusal(url, allowed: PlainHTTPPolicy.allowedByEnvironment()) {
            throw AdminFailure(.usage, refusal)
        }
        return url
    }

    /// `server/segment/segment…?name=value…`, each part percent-encoded (a team named `a b` is `a%20b`).
    static func url(_ server: URL, _ segments: [String], query: [(String, String)] = []) -> URL {
        var text = server.absoluteString
        for segment in segments { text += "/" + encode(segment) }
        if !query.isEmpty {
            text += "?" + query.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
        }
        // Every part is encoded to unreserved characters, so the text is always a valid URL.
        return URL(string: text)!
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private static func encode(_ text: String) -> String {
        // "." and ".." would be removed as dot segments on the way: encode them too.
        if !text.isEmpty, text.allSatisfy({ $0 == "." }) { return String(repeating: "%2E", count: text.count) }
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
