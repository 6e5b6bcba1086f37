import Coffer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a server's answers and network errors become exit codes and one-line messages.
///
/// Error responses are `{"error": CODE, "reason": TEXT}`; the line is `REASON (HTTP STATUS CODE)`.
enum ServerFailure {
    private struct ErrorBody: Decodable {
        let error: String
        let reason: String
    }

    /// The exit status for an HTTP error status: 401/403 → 77, 404 → 66, 429 → 75, other 4xx → 65,
    /// 5xx → 69; anything else (a redirect, an unexpected status) → 76.
    static func status(forHTTP code: Int) -> AdminFailure.Status {
        switch code {
        case 401, 403: return .permission
        case 404: return .noInput
        case 429: return .tryAgain
        case 400..<500: return .badData
        case 500..<600: return .unavailable
        default: return .protocolError
        }
    }

    /// The failure for a non-2xx answer.
    static func failure(for answer: HTTPTransport.Answer, from server: URL) -> AdminFailure {
        let code = answer.response.statusCode
        let status = status(forHTTP: code)
        if (300..<400).contains(code) {
            let location = answer.response.value(forHTTPHeaderField: "Location") ?? "elsewhere"
            return AdminFailure(status, "\(server.absoluteString) redirects to \(location); use that address (HTTP \(code))")
        }
        var reason: String
        var suffix = "HTTP \(code)"
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: answer.body) {
            reason = body.reason
            suffix += " " + body.error
        } else {
            reason = HTTPURLResponse.localizedString(forStatusCode: code)
        }
        if code == 429 || code == 503, let retry = RetryAfter.seconds(answer.response.value(forHTTPHeaderField: "Retry-After")) {
            reason += "; try again in \(Int(retry)) seconds"
        }
        return AdminFailure(status, "\(reason) (\(suffix))")
    }

    /// The failure for a request that got no answer.
    static func unreachable(_ server: URL, _ error: any Error) -> AdminFailure {
        let detail: String
        if let error = error as? URLError {
            switch error.code {
            case .cannotConnectToHost: detail = "connection refused"
            case .cannotFindHost, .dnsLookupFailed: detail = "host not found"
            case .timedOut: detail = "timed out"
            case .networkConnectionLost: detail = "the connection was lost"
            case .notConnectedToInternet: detail = "not connected to a network"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                detail = "the TLS connection failed"
            case .badServerResponse: detail = "the answer was not HTTP"
            default: detail = error.localizedDescription
            }
        } else {
            detail = String(describing: error)
        }
        return AdminFailure(.unavailable, "cannot reach \(server.absoluteString): \(detail)")
    }

    /// A 2xx answer that is not what the API describes: the address is probably not a Coffer server.
    static func unexpectedAnswer(from server: URL, _ what: String) -> AdminFailure {
        AdminFailure(.protocolError, "unexpected answer from \(server.absoluteString) (\(what)); is it a Coffer server?")
    }
}
