import Foundation

/// An S3-compatible bucket that holds the blobs instead of a folder: `COFFER_BLOB_STORE=s3://BUCKET[/PREFIX]`
/// with the standard `AWS_*` variables (docs/operations.md, "Blobs in object storage").
///
/// Its description names the bucket and endpoint only: the secret key and session token never
/// appear in a log, an error or a dump.
public struct ObjectStoreSettings: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How a bucket is named in requests.
    public enum Addressing: String, Sendable {
        /// `https://ENDPOINT/BUCKET/KEY`: what Ceph RGW, MinIO and most self-hosted stores need.
        case path
        /// `https://BUCKET.ENDPOINT/KEY`: AWS S3's own style.
        case virtual
    }

    /// The bucket's name.
    public var bucket: String
    /// The key prefix every object of this server has (empty, or ending in `/`).
    public var prefix: String
    /// The region signatures are made for (AWS_REGION; default us-east-1).
    public var region: String
    /// The store's address for non-AWS stores (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL); nil: AWS S3 of ``region``.
    public var endpoint: String?
    /// Path or virtual-host addressing (COFFER_S3_ADDRESSING; path by default with a custom endpoint).
    public var addressing: Addressing
    /// AWS_ACCESS_KEY_ID.
    public var accessKeyID: String
    /// AWS_SECRET_ACCESS_KEY: a secret.
    public var secretAccessKey: String
    /// AWS_SESSION_TOKEN, for temporary credentials: a secret.
    public var sessionToken: String?
    /// Whether blob GETs are answered with a redirect to a presigned URL (COFFER_S3_PRESIGN=1).
    public var presign: Bool
    /// The bytes all uploads in progress may hold at once (COFFER_S3_UPLOAD_MEMORY; default 1 GiB).
    public var uploadMemory: Int64 = UploadMemory.defaultLimit

    /// The endpoint requests go to: ``endpoint``, or AWS S3's for ``region``.
    public var resolvedEndpoint: String { endpoint ?? "https://s3.\(region).amazonaws.com" }

    /// `s3://BUCKET/PREFIX at ENDPOINT`: no credentials.
    public var description: String { "s3://\(bucket)/\(prefix) at \(resolvedEndpoint)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// A dump shows the ``description`` only.
    public var customMirror: Mirror { Mirror(self, children: ["store": description]) }
}

extension ObjectStoreSettings {
    /// The settings of `COFFER_BLOB_STORE` (already read as `location`) and the `AWS_*`
    /// and `COFFER_S3_*` variables; throws naming the first one that is missing or unusable.
    static func read(_ location: BucketLocation, from settings: SettingSource) throws(SettingError) -> ObjectStoreSettings {
        let needed = "set when COFFER_BLOB_STORE names a bucket"
        guard let accessKeyID = try settings.value("AWS_ACCESS_KEY_ID", .credential) else {
            throw SettingError(setting: "AWS_ACCESS_KEY_ID", accepts: needed)
        }
        guard let secretAccessKey = try settings.value("AWS_SECRET_ACCESS_KEY", .credential) else {
            throw SettingError(setting: "AWS_SECRET_ACCESS_KEY", accepts: needed)
        }
        var endpoint = try settings.value("AWS_ENDPOINT_URL_S3", .endpointURL)
        if endpoint == nil { endpoint = try settings.value("AWS_ENDPOINT_URL", .endpointURL) }
        let addressing = try settings.value("COFFER_S3_ADDRESSING", .addressing) ?? (endpoint == nil ? .virtual : .path)
        return ObjectStoreSettings(
            bucket: location.bucket, prefix: location.prefix, region: try settings.value("AWS_REGION", .region) ?? "us-east-1",
            endpoint: endpoint.map { String($0.reversed().drop(while: { $0 == "/" }).reversed()) }, addressing: addressing,
            accessKeyID: accessKeyID, secretAccessKey: secretAccessKey,
            sessionToken: try settings.value("AWS_SESSION_TOKEN", .credential),
            presign: try settings.value("COFFER_S3_PRESIGN", .boolean) ?? false,
            uploadMemory: try settings.value("COFFER_S3_UPLOAD_MEMORY", .integer(
                in: S3Upload.reservedBytes...Int64.max, "a whole number of bytes, at least \(S3Upload.reservedBytes) (one upload's parts)"))
                ?? UploadMemory.defaultLimit)
    }
}

/// What `COFFER_BLOB_STORE` names: a bucket and a key prefix (empty, or ending in `/`).
struct BucketLocation: Equatable {
    let bucket: String
    let prefix: String
}

extension SettingRule where Value == BucketLocation {
    /// `s3://BUCKET` or `s3://BUCKET/PREFIX`: a bucket name as S3 allows them (3–63 lowercase
    /// letters, digits, dots and hyphens) and a prefix of printable ASCII without `..` segments.
    static var blobStore: SettingRule {
        SettingRule(accepts: "s3://BUCKET or s3://BUCKET/PREFIX (a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens)") { text in
            guard text.hasPrefix("s3://") else { return nil }
            let rest = text.dropFirst(5)
            let bucket = String(rest.prefix { $0 != "/" })
            var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
            guard (3...63).contains(bucket.utf8.count),
                  bucket.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 46 || $0 == 45 }),
                  bucket.first!.isLetter || bucket.first!.isNumber, bucket.last!.isLetter || bucket.last!.isNumber,
                  prefix.utf8.count <= 512, prefix.utf8.allSatisfy({ (33...126).contains($0) }),
                  !prefix.split(separator: "/").contains(where: { $0 == ".." || $0 == "." })
            else { return nil }
            if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
            return BucketLocation(bucket: bucket, prefix: prefix)
        }
    }
}

extension SettingRule where Value == String {
    /// An access key, secret or session token: printable ASCII, no spaces.
    static var credential: SettingRule {
        SettingRule(accepts: "printable characters without spaces") { text in
            text.utf8.count <= 4096 && text.utf8.allSatisfy { (33...126).contains($0) } ? text : nil
        }
    }

    /// A region name such as us-east-1.
    static var region: SettingRule {
        SettingRule(accepts: "a region name such as us-east-1") { text in
            (1...64).contains(text.utf8.count) && text.utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }) ? text : nil
        }
    }

    /// The object store's address.
    static var endpointURL: SettingRule {
        url(schemes: ["http", "https"], "an http:// or https:// URL with a host, such as http://127.0.0.1:7480")
    }
}

extension SettingRule where Value == ObjectStoreSettings.Addressing {
    /// `path` or `virtual`.
    static var addressing: SettingRule {
        SettingRule(accepts: "path or virtual") { ObjectStoreSettings.Addressing(rawValue: $0.lowercased()) }
    }
}
