/// Why a request to the object store failed, grouped by who must act.
///
/// The description is one line that names the setting an operator must fix where that is clear
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ENDPOINT_URL_S3`, the bucket). It carries the
/// endpoint, bucket, key, HTTP status and S3 error code, and never a secret, token, signature or
/// presigned URL.
public enum S3Error: Error, Sendable, Equatable {
    /// The store refused the credentials: 403 with `InvalidAccessKeyId`, `SignatureDoesNotMatch`
    /// (wrong secret), or a 403 without a body (HEAD answers carry none). `code` is nil for the latter.
    case credentialsRejected(code: String?)
    /// The credentials are valid but not allowed to do `operation` (403 `AccessDenied`).
    case accessDenied(operation: String, bucket: String)
    /// The host's clock is too far from the store's (403 `RequestTimeTooSkewed`).
    case clockSkewed
    /// The bucket does not exist at the endpoint (404 `NoSuchBucket`, or 404 to HEAD bucket).
    case bucketMissing(bucket: String, endpoint: String)
    /// The endpoint could not be reached or did not answer in time; `reason` is the network error
    /// ("connection refused", "timed out", …).
    case unreachable(endpoint: String, reason: String)
    /// The answer had begun and then broke off (connection closed or reset, read timeout): worth
    /// one retry by the caller; `reason` says how much was missing where known.
    case interrupted(operation: String, reason: String)
    /// The requested range starts past the object's end (416); `size` when the store said it.
    case rangeNotSatisfiable(key: String, size: Int64?)
    /// Any other answer: the HTTP status and the S3 error code when the body had one.
    case unexpectedResponse(operation: String, status: Int, code: String?)
    /// An answer that does not have the form S3 documents (bad XML, missing field, impossible number,
    /// a body longer than the limit, a body shorter than its `Content-Length`).
    case malformedResponse(operation: String, reason: String)
    /// A call the client refuses before sending anything (a part number outside 1…10000, a bad key,
    /// an endpoint that is not `http(s)://host[:port]`, …).
    case invalidArgument(String)
}

extension S3Error: CustomStringConvertible {
    /// One line saying what failed and, where clear, which setting to fix.
    public var description: String {
        switch self {
        case .credentialsRejected(let code):
            "AWS_SECRET_ACCESS_KEY or AWS_ACCESS_KEY_ID is rejected by the store (403\(code.map { " " + $0 } ?? ""))"
        case .accessDenied(let operation, let bucket):
            "the key in AWS_ACCESS_KEY_ID may not \(operation) in bucket '\(bucket)' (403 AccessDenied): grant it in the store's policy"
        case .clockSkewed:
            "this host's clock differs from the store's by too much (403 RequestTimeTooSkewed): synchronise the clock"
        case .bucketMissing(let bucket, let endpoint):
            "bucket '\(bucket)' does not exist at \(endpoint) (404 NoSuchBucket)"
        case .unreachable(let endpoint, let reason):
            "the store at \(endpoint) cannot be reached (AWS_ENDPOINT_URL_S3): \(reason)"
        case .interrupted(let operation, let reason):
            "the store's answer to \(operation) broke off: \(reason)"
        case .rangeNotSatisfiable(let key, let size):
            "the range asked of '\(key)' starts past its end\(size.map { " (size \($0))" } ?? "") (416)"
        case .unexpectedResponse(let operation, let status, let code):
            "the store answered \(operation) with \(status)\(code.map { " " + $0 } ?? "")"
        case .malformedResponse(let operation, let reason):
            "the store's answer to \(operation) is malformed: \(reason)"
        case .invalidArgument(let reason):
            reason
        }
    }
}
