import Vapor

/// An error with a stable machine-readable code, returned as `{"error": CODE, "reason": TEXT}`.
struct APIError: AbortError {
    let status: HTTPResponseStatus
    let code: String
    let reason: String
    var headers: HTTPHeaders = [:]

    init(_ status: HTTPResponseStatus, _ code: String, _ reason: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.code = code
        self.reason = reason
        self.headers = headers
    }

    static func unauthorized(_ reason: String = "a valid API token is required") -> APIError {
        APIError(.unauthorized, "unauthorized", reason)
    }
    static func forbidden(_ code: String, _ reason: String) -> APIError { APIError(.forbidden, code, reason) }
    static func notFound(_ what: String) -> APIError { APIError(.notFound, "not_found", "\(what) not found") }
    static func invalid(_ reason: String) -> APIError { APIError(.badRequest, "invalid_request", reason) }
    static func conflict(_ reason: String) -> APIError { APIError(.conflict, "conflict", reason) }
}

/// The JSON body of every error response.
struct ErrorBody: Content {
    let error: String
    let reason: String
}
