import Crypto
import CofferFormat
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`), written from AWS's description of the algorithm and
/// checked against its published test suite and S3 examples (Tests/CofferS3Tests/SigV4VectorTests.swift).
///
/// Pure and deterministic: the same request, credentials and date always give the same signature, and
/// nothing is read from the clock or the environment. The secret is only ever an HMAC key; it appears
/// in no returned value, description or error.
public struct SigV4Signer: Sendable {
    /// The key pair requests are signed with.
    public let credentials: S3Credentials
    /// The region of the credential scope (`us-east-1` for most S3-compatible stores).
    public let region: String
    /// The service of the credential scope: `s3`.
    public let service: String

    /// A signer for `service` in `region`.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The request headers to add for Signature Version 4 header authentication.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, upper case.
    ///   - encodedPath: the path exactly as sent, already URI-encoded (``S3Location`` builds it).
    ///   - query: the query parameters, not encoded; the client sends them in ``canonicalQuery(_:)`` form.
    ///   - headers: every header to sign, `host` among them; names in any case, values as sent.
    ///   - payload: the body's SHA-256 or ``SigV4Payload/unsigned``.
    ///   - date: the signing time (`x-amz-date`).
    ///   - contentHashHeader: whether to add and sign `x-amz-content-sha256` (S3 requires it; the
    ///     generic test suite's services do not use it).
    /// - Returns: `authorization`, `x-amz-date`, `x-amz-content-sha256` when asked for, and
    ///   `x-amz-security-token` when the credentials carry a session token (signed too, as S3 wants).
    public func headers(
        method: String,
        encodedPath: String,
        query: [(name: String, value: String)],
        headers: [(name: String, value: String)],
        payload: SigV4Payload,
        date: Date,
        contentHashHeader: Bool = true
    ) -> [(name: String, value: String)] {
        let time = SigV4Date(date)
        var added: [(name: String, value: String)] = [("x-amz-date", time.timestamp)]
        if contentHashHeader { added.append(("x-amz-content-sha256", payload.value)) }
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let (canonical, signedHeaders) = Self.canonicalRequest(
            method: method, encodedPath: encodedPath, query: query, headers: headers + added, payload: payload
        )
        let signature = signature(canonicalRequest: canonical, time: time)
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(time)), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return [("authorization", authorization)] + added
    }

    /// The query string of a presigned URL (query-string authentication), `X-Amz-Signature` last.
    ///
    /// Only `host` is signed and the payload is `UNSIGNED-PAYLOAD`, so whoever holds the URL can send
    /// the request until it expires. A session token is signed in as `X-Amz-Security-Token`.
    /// - Parameters:
    ///   - host: the `Host` header the URL's holder will send (`bucket.host` or `host:port`).
    ///   - expires: seconds the URL stays valid, 1…604800 (seven days, S3's limit).
    /// - Throws: ``S3Error/invalidArgument(_:)`` for an `expires` outside 1…604800.
    public func presignedQuery(
        method: String,
        host: String,
        encodedPath: String,
        query: [(name: String, value: String)] = [],
        expires: Int,
        date: Date
    ) throws(S3Error) -> String {
        guard (1...604_800).contains(expires) else {
            throw .invalidArgument("a presigned URL's lifetime must be 1…604800 seconds, not \(expires)")
        }
        let time = SigV4Date(date)
        var items = query
        items.append(("X-Amz-Algorithm", "AWS4-HMAC-SHA256"))
        items.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(time))"))
        items.append(("X-Amz-Date", time.timestamp))
        items.append(("X-Amz-Expires", String(expires)))
        if let token = credentials.sessionToken { items.append(("X-Amz-Security-Token", token)) }
        items.append(("X-Amz-SignedHeaders", "host"))
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders([("host", host)])
        let queryString = SigV4Encoding.canonicalQuery(items)
        let canonical = [
            method, encodedPath, queryString, canonicalHeaders, signedHeaders, SigV4Payload.unsigned.value,
        ].joined(separator: "\n")
        return queryString + "&X-Amz-Signature=" + signature(canonicalRequest: canonical, time: time)
    }

    /// The query string the client sends and signs (``SigV4Encoding/canonicalQuery(_:)``).
    public static func canonicalQuery(_ items: [(name: String, value: String)]) -> String {
        SigV4Encoding.canonicalQuery(items)
    }

    /// The canonical request (method, path, query, headers, signed-header list and payload hash, one
    /// per line) and its signed-header list.
    static func canonicalRequest(
        method: String,
        encodedPath: String,
        query: [(name: String, value: String)],
        headers: [(name: String, value: String)],
        payload: SigV4Payload
    ) -> (text: String, signedHeaders: String) {
        let (canonicalHeaders, signedHeaders) = canonicalHeaders(headers)
        let text = [
            method, encodedPath, SigV4Encoding.canonicalQuery(query), canonicalHeaders, signedHeaders, payload.value,
        ].joined(separator: "\n")
        return (text, signedHeaders)
    }

    /// `20130524/us-east-1/s3/aws4_request`.
    func scope(_ time: SigV4Date) -> String {
        "\(time.day)/\(region)/\(service)/aws4_request"
    }

    /// The hex signature of a canonical request: HMAC of the string to sign under the derived key.
    func signature(canonicalRequest: String, time: SigV4Date) -> String {
        let stringToSign = [
            "AWS4-HMAC-SHA256", time.timestamp, scope(time), SHA256.hash(data: Array(canonicalRequest.utf8)).hexString,
        ].joined(separator: "\n")
        return Array(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: signingKey(day: time.day))).hexString
    }

    /// The signing key: HMAC chain over the day, region, service and `aws4_request`, keyed first with
    /// `AWS4` + secret.
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// The canonical header block (`name:value\n` each, sorted by lowercase name) and the signed-header
    /// list (`a;b;c`). Values are trimmed and each run of spaces or tabs inside becomes one space;
    /// headers that repeat a name are joined with `,` in the order given.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> (block: String, signed: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            merged[name.lowercased(), default: []].append(foldWhitespace(value))
        }
        let names = merged.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let block = names.map { $0 + ":" + merged[$0]!.joined(separator: ",") + "\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// `value` without leading or trailing whitespace, each inner run of whitespace one space.
    static func foldWhitespace(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }).joined(separator: " ")
    }
}
