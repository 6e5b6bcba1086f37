import CofferS3
import Vapor

/// Maps every error to `{"error": CODE, "reason": TEXT}` with its status, in one place.
///
/// Unexpected errors become 500 `internal` with no detail in the body; they are logged with their
/// type only, since an error's description might quote data from the request.
///
/// A future-based middleware (not `AsyncMiddleware`): it runs on the event loop and costs a request
/// no hop to a task.
///
/// A request no route takes is 404, unless its path is a route's with another method: then it is
/// 405 with `Allow` (``AllowedMethods``).
struct APIErrorMiddleware: Middleware {
    let allowedMethods: AllowedMethods

    init(routes: Routes) {
        allowedMethods = AllowedMethods(routes: routes)
    }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).flatMapErrorThrowing { error in
            let mapped = error is RouteNotFound ? allowedMethods.methodNotAllowed(for: request) ?? error : error
            let (status, body, headers) = Self.describe(mapped, logger: request.logger)
            let response = Response(status: status, headers: headers)
            try response.content.encode(body, as: .json)
            return response
        }
    }

    static func describe(_ error: any Error, logger: Logger) -> (HTTPResponseStatus, ErrorBody, HTTPHeaders) {
        switch error {
        case let error as APIError:
            return (error.status, ErrorBody(error: error.code, reason: error.reason), error.headers)
        case let error as any AbortError:
            let code: String
            switch error.status {
            case .notFound: code = "not_found"
            case .unauthorized: code = "unauthorized"
            case .forbidden: code = "forbidden"
            case .payloadTooLarge: code = "too_large"
            case .unsupportedMediaType, .badRequest, .unprocessableEntity: code = "invalid_request"
            default: code = error.status.code >= 500 ? "internal" : "invalid_request"
            }
            // Vapor's own 422 means no body where a route decodes one: a malformed request (400),
            // as every other unreadable body is; a route's own 422 is an ``APIError``.
            if error.status == .unprocessableEntity {
                return (.badRequest, ErrorBody(error: code, reason: "the request has no body; send the JSON this route takes"), error.headers)
            }
            let reason = error.status.code >= 500 ? "internal error" : error.reason
            return (error.status, ErrorBody(error: code, reason: reason), error.headers)
        case let error as S3Error:
            // The store's failure, not the request's: logged in full (an S3Error names the store,
            // bucket, key and status, never a secret), answered without detail.
            logger.error("blob store request failed", metadata: ["reason": "\(error.description)"])
            return (.serviceUnavailable, ErrorBody(error: "blob_store_unavailable", reason: "the blob store did not answer as expected; try again"), [:])
        case is DecodingError:
            return (.badRequest, ErrorBody(error: "invalid_request", reason: "the request body is not the expected JSON"), [:])
        case _ where DatabaseBusy.matches(error):
            logger.warning("no database connection came free in time; answered 503 busy")
            return (.serviceUnavailable, ErrorBody(error: "busy", reason: "the server is busy; retry shortly"),
                    ["Retry-After": String(DatabaseBusy.retryAfterSeconds)])
        case _ where UniqueViolation.matches(error):
            // A handler that knows the name says so (``UniqueViolation/asConflict(_:_:)``); this is
            // the fallback for the rest, and never quotes the database's message.
            return (.conflict, ErrorBody(error: "conflict", reason: "another request stored the same name at the same time; look again and retry"), [:])
        default:
            logger.error("unhandled error", metadata: ["type": "\(type(of: error))"])
            return (.internalServerError, ErrorBody(error: "internal", reason: "internal error"), [:])
        }
    }
}
