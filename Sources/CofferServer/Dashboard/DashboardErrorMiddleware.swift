import CofferS3
import Vapor

/// Turns every error of a dashboard route into a page that says in words what went wrong, with the
/// status the API would give; a request without a session goes to the sign-in page instead.
///
/// Unexpected errors say only that the server failed; they are logged with their type, never their
/// description, which might quote a form's contents.
struct DashboardErrorMiddleware: AsyncMiddleware {
    struct ErrorPage: Encodable, Sendable {
        let chrome: Chrome
        let status: Int
        let heading: String
        let message: String
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch DashboardError.signInRequired {
            return request.seeOther("/dashboard/sign-in")
        } catch let error as APIError where error.status == .unauthorized {
            return request.seeOther("/dashboard/sign-in")
        } catch {
            let (status, heading, message) = Self.describe(error, logger: request.logger)
            let session = request.auth.get(DashboardSession.self)
            let chrome = Chrome(title: heading, user: session?.name, csrf: session?.csrfToken ?? "", section: "")
            let response: Response
            do {
                response = try await request.page("error", ErrorPage(chrome: chrome, status: Int(status.code), heading: heading, message: message), status: status)
            } catch {
                request.logger.error("dashboard error page failed", metadata: ["type": "\(type(of: error))"])
                response = Response(status: status, body: .init(string: message))
            }
            Self.addRetryAfter(for: error, to: response)
            return response
        }
    }

    /// Says when to try again (`Retry-After`), as the API's answer to the same error does: a
    /// refusal of a busy server (503) or of too many requests (429) is to be retried, not fixed.
    static func addRetryAfter(for error: any Error, to response: Response) {
        let seconds = (error as? APIError)?.headers.first(name: "Retry-After")
            ?? (DatabaseBusy.matches(error) ? String(DatabaseBusy.retryAfterSeconds) : nil)
        if let seconds { response.headers.replaceOrAdd(name: "Retry-After", value: seconds) }
    }

    static func describe(_ error: any Error, logger: Logger) -> (HTTPStatus, String, String) {
        switch error {
        case let error as DashboardError:
            switch error {
            case .csrfRefused:
                return (.forbidden, "This form was refused",
                        "The form did not carry this dashboard's current security token: it was already sent (a form that shows a secret works once), the page is old, or it came from another site. Nothing was changed. Reload the page and try again.")
            case .invalidForm(let reason):
                return (.badRequest, "The form needs a correction", reason)
            case .signInRequired:
                return (.unauthorized, "Sign in first", "This page needs you to sign in.")
            }
        case let error as APIError:
            switch error.status {
            case .forbidden: return (.forbidden, "Not allowed", Self.sentence(error.reason))
            case .notFound: return (.notFound, "Not found", Self.sentence(error.reason))
            case .conflict: return (.conflict, "That cannot be done now", Self.sentence(error.reason))
            default: return (error.status, "That did not work", Self.sentence(error.reason))
            }
        case let error as any AbortError where error.status.code < 500:
            let heading = error.status == .notFound ? "Not found" : "That did not work"
            let message = error.status == .notFound ? "There is no such page." : Self.sentence(error.reason)
            return (error.status, heading, message)
        case let error as S3Error:
            logger.error("blob store request failed", metadata: ["reason": "\(error.description)"])
            return (.serviceUnavailable, "The model store did not answer", "The server could not reach its blob store. The server's log says why; try again later.")
        case is DecodingError:
            return (.badRequest, "The form needs a correction", "A form field is missing or not valid.")
        case _ where DatabaseBusy.matches(error):
            logger.warning("no database connection came free in time; answered 503")
            return (.serviceUnavailable, "The server is busy", "Nothing went wrong with this request; the server had too much to do at once. Try again in a moment.")
        case _ where UniqueViolation.matches(error):
            return (.conflict, "That cannot be done now", "Another request stored the same name at the same time. Reload the page and try again.")
        default:
            logger.error("dashboard error", metadata: ["type": "\(type(of: error))"])
            return (.internalServerError, "Something went wrong", "The server could not finish this. The server's log says why; try again later.")
        }
    }

    /// The API's reasons are lowercase clauses; a page shows them as sentences.
    static func sentence(_ reason: String) -> String {
        guard let first = reason.first else { return reason }
        let capitalized = first.uppercased() + reason.dropFirst()
        return capitalized.hasSuffix(".") ? capitalized : capitalized + "."
    }
}
