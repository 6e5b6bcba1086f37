import Vapor

extension APIError {
    /// 429 `too_many_uploads`, retried in 10 seconds: the account's uploads in progress hold as much
    /// of the blob store as one account may (``UploadMemory``'s share of a bucket's memory,
    /// ``UploadSlots`` of a folder). Refused before a byte of the body is read.
    static func tooManyUploads() -> APIError {
        APIError(.tooManyRequests, "too_many_uploads",
                 "your account has as many uploads in progress as one account may; retry when one has finished",
                 headers: ["Retry-After": "10"])
    }
}
