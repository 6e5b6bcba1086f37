import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

extension S3Client {
    /// The error for a request that got no answer: `CancellationError` when the task was cancelled,
    /// ``S3Error/unreachable(endpoint:reason:)`` with a short reason otherwise.
    func networkFailure(_ error: any Error) -> any Error {
        if let error = error as? S3Error { return error }
        if Task.isCancelled || error is CancellationError { return CancellationError() }
        return S3Error.unreachable(endpoint: location.endpoint, reason: Self.reason(error))
    }

    /// A few words for a network error. Only the error's kind and the system's message are used, never
    /// a request's URL or headers.
    static func reason(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection within the connect timeout"
            case .readTimeout: return "no data within the read timeout"
            case .deadlineExceeded: return "no answer within the request timeout"
            case .remoteConnectionClosed: return "the connection was closed before the answer"
            case .cancelled: return "the request was cancelled"
            default: return "HTTP client error \(error)"
            }
        }
        if let error = error as? IOError { return errnoReason(error.errnoCode) }
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first?.error as? IOError { return errnoReason(first.errnoCode) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name does not resolve" }
            return "the connection failed"
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "no connection within the connect timeout" }
        return String(String(describing: error).prefix(200))
    }

    private static func errnoReason(_ code: CInt) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset"
        case ETIMEDOUT: "timed out"
        case EHOSTUNREACH, ENETUNREACH: "no route to the host"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}
