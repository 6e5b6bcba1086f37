import Foundation

extension S3Client {
    /// A URL that lets whoever holds it GET `key` without credentials until `expires` seconds after
    /// `now` (query-string authentication, only `host` signed). The URL is the product: hand it only to
    /// whom may read the object, and do not log it.
    /// - Throws: ``S3Error/invalidArgument(_:)`` for `expires` outside 1…604800 or a bad key.
    public func presignedGET(key: String, expires: Int, now: Date) throws(S3Error) -> String {
        let path = try location.encodedPath(forKey: key)
        let query = try signer.presignedQuery(method: "GET", host: location.hostHeader, encodedPath: path, expires: expires, date: now)
        return location.url(encodedPath: path, query: query)
    }
}
