import Foundation

/// Where objects live: the store's endpoint, the region of the signatures, the bucket, a key prefix,
/// and how the bucket is addressed.
///
/// Built once from settings and checked strictly: an endpoint that is not `http(s)://host[:port]`, a
/// bucket name S3 would refuse, or a region with characters a credential scope cannot hold are refused
/// at start with one line, never replaced by a default.
public struct S3Location: Sendable, Equatable {
    /// How the bucket appears in a request.
    public enum Addressing: Sendable, Equatable {
        /// `scheme://host:port/bucket/key` (RGW, MinIO, most self-hosted stores).
        case path
        /// `scheme://bucket.host:port/key` (AWS's default).
        case virtual
    }

    /// `http` or `https`.
    public let scheme: String
    /// The endpoint's host name or address (IPv6 without brackets).
    public let host: String
    /// The port when the endpoint names one.
    public let port: Int?
    /// The region of the credential scope.
    public let region: String
    /// The bucket's name.
    public let bucket: String
    /// Prepended to every key (`blobs/`, or empty).
    public let keyPrefix: String
    /// Path-style or virtual-hosted addressing.
    public let addressing: Addressing

    /// A location; `endpoint` is `http(s)://host[:port]` with an optional trailing `/`.
    /// - Throws: ``S3Error/invalidArgument(_:)`` naming the setting that is wrong.
    public init(
        endpoint: String,
        region: String = "us-east-1",
        bucket: String,
        keyPrefix: String = "",
        addressing: Addressing = .path
    ) throws(S3Error) {
        guard let components = URLComponents(string: endpoint),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.path.isEmpty || components.path == "/",
              components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
        else {
            // Never the value itself: it may carry credentials (https://KEY:SECRET@host).
            throw .invalidArgument("AWS_ENDPOINT_URL_S3 must be http(s)://host[:port], with no user, password, path, query or fragment")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw .invalidArgument("AWS_ENDPOINT_URL_S3 has a port outside 1…65535: '\(endpoint)'")
        }
        guard !region.isEmpty, region.utf8.allSatisfy({ SigV4Encoding.isUnreserved($0) && $0 != UInt8(ascii: "~") }) else {
            throw .invalidArgument("AWS_REGION must be letters, digits and '-', not '\(region)'")
        }
        guard Self.isValidBucket(bucket) else {
            throw .invalidArgument("the bucket name '\(bucket)' is not one S3 accepts (3–63 of a–z 0–9 . -, starting and ending with a letter or digit)")
        }
        guard keyPrefix.utf8.count <= 512 else { throw .invalidArgument("the key prefix is longer than 512 bytes") }
        self.scheme = scheme
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port
        self.region = region
        self.bucket = bucket
        self.keyPrefix = keyPrefix
        self.addressing = addressing
    }

    /// S3's bucket naming rules (the strict, DNS-compatible ones).
    static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func alphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard (3...63).contains(bytes.count), let first = bytes.first, let last = bytes.last,
              alphanumeric(first), alphanumeric(last), !name.contains("..")
        else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }
}
