import Coffer
import CofferAsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Coffer server's REST API (docs/openapi.json) as the admin commands use it.
///
/// Requests carry `Authorization: Bearer TOKEN`; the token is never printed. Answers other than
/// 2xx, and requests that get no answer, throw an ``AdminFailure`` (see ``ServerFailure``).
struct APIClient: Sendable {
    let server: URL
    let token: String?
    let transport = HTTPTransport()

    init(server: URL, token: String?) {
        self.server = server
        self.token = token
    }

    /// The client for the server and token in effect: COFFER_SERVER and COFFER_TOKEN, else the
    /// saved credentials. The saved token is used only with the server it was saved for.
    static func configured(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> APIClient {
        let serverOverride = environment["COFFER_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
        let tokenOverride = try environment["COFFER_TOKEN"].flatMap { $0.isEmpty ? nil : try APIToken.clean($0, from: "COFFER_TOKEN") }
        if let serverOverride, let tokenOverride {
            return APIClient(server: try ServerAddress.parse(serverOverride), token: tokenOverride)
        }
        let saved = try Credentials.load(environment)
        guard let serverText = serverOverride ?? saved?.server else { throw AdminFailure.notLoggedIn("server") }
        let server = try ServerAddress.parse(serverText)
        if let tokenOverride { return APIClient(server: server, token: tokenOverride) }
        guard let saved, (try? ServerAddress.parse(saved.server)) == server else {
            throw AdminFailure.notLoggedIn("API token for \(server.absoluteString)")
        }
        return APIClient(server: server, token: try APIToken.clean(saved.token, from: Credentials.path(environment)))
    }

    /// A request to `server/segments…` with the token, and a JSON body if one is given.
    func request(_ method: String, _ segments: [String], query: [(String, String)] = [],
                 json body: (any Encodable)? = nil, authorized: Bool = true) -> URLRequest {
        var request = URLRequest(url: ServerAddress.url(server, segments, query: query))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if authorized, let token { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        if let body {
            let encoder = JSONEncoder()
            // Encoding our own request structs cannot fail.
            request.httpBody = try! encoder.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends a request; returns a 2xx answer, throws for anything else. The body is read up to
    /// ``HTTPTransport/answerLimit``; a longer one is refused (it is not an API answer).
    func send(_ request: URLRequest) async throws -> HTTPTransport.Answer {
        try checked(try await deliver { try await transport.send(request) })
    }

    /// Sends a request whose body may be large (a blob): each piece goes to `consume` as it
    /// arrives, the next is read once `consume` returned. Only 2xx answers reach `consume`;
    /// anything else is read up to the answer limit and thrown as usual.
    ///
    /// With `followingBlobRedirect` (a blob GET, and nothing else), a redirect to where the blob
    /// is stored is followed by a new request carrying only Range and Accept-Encoding, never the
    /// token (the SDK's `BlobRedirect`); a redirect it refuses is a protocol error (exit 76).
    func stream(_ request: URLRequest, followingBlobRedirect: Bool = false,
                consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
        let refusal = CollectedRefusal()
        let collect: @Sendable (HTTPURLResponse, Data) throws -> Void = { response, piece in
            if (200..<300).contains(response.statusCode) {
                try consume(response, piece)
            } else {
                try refusal.append(piece)
            }
        }
        let response = try await deliver {
            let response = followingBlobRedirect
                ? try await BlobRedirect.stream(request, through: transport.transport, consume: collect)
                : try await transport.stream(request, consume: collect)
            return HTTPTransport.Answer(response: response, body: refusal.body)
        }
        return try checked(response).response
    }

    /// Sends a file as the body of a request, streamed from disk; `progress` hears of the bytes sent.
    func upload(_ request: URLRequest, fromFile path: String, progress: (@Sendable (UInt64) -> Void)? = nil) async throws -> HTTPTransport.Answer {
        do {
            return try checked(try await deliver { try await transport.upload(request, fromFile: path, progress: progress) })
        } catch is BodyLengthChanged {
            throw AdminFailure(.ioError, "\(path) changed while it was being uploaded; upload it again")
        }
    }

    /// `GET` and decode.
    func get<Value: Decodable>(_ type: Value.Type, _ segments: String..., query: [(String, String)] = []) async throws -> Value {
        try await get(type, segments, query: query)
    }

    /// `GET` and decode, with the path as an array.
    func get<Value: Decodable>(_ type: Value.Type, _ segments: [String], query: [(String, String)] = []) async throws -> Value {
        try decode(type, from: try await send(request("GET", segments, query: query)))
    }

    /// `POST` a JSON body (or none) and decode the answer.
    func post<Value: Decodable>(_ type: Value.Type, _ segments: [String], json body: (any Encodable)? = nil) async throws -> Value {
        try decode(type, from: try await send(request("POST", segments, json: body)))
    }

    /// `PATCH` a JSON body and decode the answer.
    func patch<Value: Decodable>(_ type: Value.Type, _ segments: [String], json body: any Encodable) async throws -> Value {
        try decode(type, from: try await send(request("PATCH", segments, json: body)))
    }

    /// `DELETE`; the answer has no body.
    func delete(_ segments: String...) async throws {
        _ = try await send(request("DELETE", segments))
    }

    func decode<Value: Decodable>(_ type: Value.Type, from answer: HTTPTransport.Answer) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: answer.body)
        } catch {
            throw ServerFailure.unexpectedAnswer(from: server, "HTTP \(answer.response.statusCode), not the expected JSON")
        }
    }

    private func deliver(_ operation: () async throws -> HTTPTransport.Answer) async throws -> HTTPTransport.Answer {
        do {
            return try await operation()
        } catch let error as HTTPTransport.AnswerTooLarge {
            throw ServerFailure.unexpectedAnswer(from: server, "an answer longer than \(error.limit >> 20) MiB")
        } catch let refusal as BlobRedirect.Refusal {
            throw AdminFailure(.protocolError, "\(server.absoluteString): \(refusal.reason); not followed (HTTP \(refusal.status))")
        } catch let error as URLError {
            throw ServerFailure.unreachable(server, error)
        } catch let error as NSError where error.domain == NSURLErrorDomain {
            throw ServerFailure.unreachable(server, URLError(URLError.Code(rawValue: error.code) ?? .unknown))
        }
    }

    private func checked(_ answer: HTTPTransport.Answer) throws -> HTTPTransport.Answer {
        guard (200..<300).contains(answer.response.statusCode) else { throw ServerFailure.failure(for: answer, from: server) }
        return answer
    }
}

/// The body of an error answer to a streamed request, kept up to the answer limit.
private final class CollectedRefusal: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()

    func append(_ piece: Data) throws {
        try lock.withLock {
            guard piece.count <= HTTPTransport.answerLimit - bytes.count else {
                throw HTTPTransport.AnswerTooLarge(limit: HTTPTransport.answerLimit)
            }
            bytes.append(piece)
        }
    }

    var body: Data { lock.withLock { bytes } }
}

extension APIClient {
    /// A client for public routes: the server in effect (COFFER_SERVER, else the saved one), no token.
    static func anonymous(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> APIClient {
        let serverOverride = environment["COFFER_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
        guard let serverText = try serverOverride ?? Credentials.load(environment)?.server else { throw AdminFailure(.usage, "no server: pass --server URL, set COFFER_SERVER or run coffer login") }
        return APIClient(server: try ServerAddress.parse(serverText), token: nil)
    }

    /// `HEAD`: true for 2xx, false for 404 — and false for two answers that say nothing of
    /// whether the bytes are there: 429 (the blob routes' budget of misses is spent for this
    /// address, a flood behind it) and 503 `blob_damaged` (the stored copy is damaged; only an
    /// upload repairs it). A HEAD carries no body, so a 503 is asked again as a GET of the first
    /// byte to read its code. The caller then uploads (the server answers 200 for bytes it has, but
    /// the bytes still travel), so anything else — 5xx, no answer — throws as before: a server that
    /// is down must not cost a whole upload to find out.
    func exists(_ segments: [String]) async throws -> Bool {
        let head = try await deliver { try await transport.send(request("HEAD", segments, authorized: false)) }
        switch head.response.statusCode {
        case 200..<300: return true
        case 404, 429: return false
        case 503:
            var probe = request("GET", segments, authorized: false)
            probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
            let answer = try await deliver { try await transport.send(probe) }
            if (200..<400).contains(answer.response.statusCode) { return true }
            struct Refusal: Decodable { let error: String }
            if answer.response.statusCode == 503, (try? JSONDecoder().decode(Refusal.self, from: answer.body))?.error == "blob_damaged" {
                return false
            }
            throw ServerFailure.failure(for: answer, from: server)
        default:
            throw ServerFailure.failure(for: head, from: server)
        }
    }
}
