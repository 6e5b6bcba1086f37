import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server's device routes: manifests (docs/MANIFEST.md), key delivery (docs/KEY-DELIVERY.md)
/// and blob ranges. Maps transport failures and error answers to ``UnavailableCause``s.
struct DeviceAPI: Sendable {
    let configuration: CofferConfiguration
    let transport: any CofferTransport

    /// Where model pieces are asked for: the background session when
    /// ``CofferConfiguration/backgroundDownloads`` is set, else ``transport``.
    var pieceTransport: any CofferTransport {
        guard let settings = configuration.backgroundDownloads else { return transport }
        return BackgroundSessions.transport(for: settings, timeout: configuration.requestTimeout)
    }

    /// What a manifest request got.
    enum ManifestAnswer: Sendable {
        /// 304: the manifest named by the ETag sent is still current.
        case notModified
        /// 200: an envelope (not yet verified) and its ETag.
        case envelope(Data, etag: String?)
    }

    /// Asks for the manifest of `identifier` as `deviceID`, conditionally on `etag`.
    func manifest(_ identifier: String, deviceID: String, etag: String?) async throws(ServerFailure) -> ManifestAnswer {
        let query = [("deviceID", deviceID)] + configuration.deviceAttributes.queryItems
        var request = self.request(["v1", "device", "collections", identifier, "manifest"], query: query)
        request.setValue("Basic " + Data("\(configuration.appID):\(configuration.credential)".utf8).base64EncodedString(),
                         forHTTPHeaderField: "Authorization")
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let (response, body) = try await send(request, limit: SignedManifest.maximumEnvelopeSize)
        switch response.statusCode {
        case 304: return .notModified
        case 200: return .envelope(body, etag: response.value(forHTTPHeaderField: "ETag"))
        default: throw Self.failure(response, body)
        }
    }

    /// Asks for the model key `keyID` sealed to `devicePublicKey`, with attestation `evidence` when the app's policy asks for it.
    func deliverKey(_ keyID: String, deviceID: String, devicePublicKey: Curve25519.KeyAgreement.PublicKey,
                    evidence: Evidence? = nil) async throws(ServerFailure) -> KeyDelivery.Sealed {
        struct Body: Encodable {
            let appID: String; let credential: String; let deviceID: String; let devicePublicKey: String; let attestation: Evidence?
        }
        struct Answer: Decodable { let encapsulatedKey: String; let ciphertext: String }
        var request = self.request(["v1", "device", "keys", keyID], query: [])
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONEncoder().encode(Body(appID: configuration.appID, credential: configuration.credential, deviceID: deviceID,
                                                          devicePublicKey: devicePublicKey.rawRepresentation.base64EncodedString(),
                                                          attestation: evidence))
        let (response, body) = try await send(request, limit: 64 << 10)
        guard response.statusCode == 200 else { throw Self.failure(response, body) }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: body),
              let encapsulated = Data(base64Encoded: answer.encapsulatedKey), let ciphertext = Data(base64Encoded: answer.ciphertext)
        else { throw .answer(status: 200, code: "protocol_error", reason: "the answer is not a key delivery") }
        return KeyDelivery.Sealed(encapsulatedKey: encapsulated, ciphertext: ciphertext)
    }

    /// A request to the server for `path` (each component percent-encoded) with `query`.
    func request(_ path: [String], query: [(String, String)]) -> URLRequest {
        var url = configuration.serverURL
        for component in path { url.appendPathComponent(component) }
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.percentEncodedQuery = query.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
            url = components.url ?? url
        }
        var request = URLRequest(url: url)
        request.timeoutInterval = configuration.requestTimeout
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        return request
    }

    /// Sends a request whose answer is small, within ``CofferConfiguration/requestDeadline`` from
    /// start to end however slowly its bytes come (``RequestDeadline``); network failures and a
    /// request past its deadline become `.unreachable`.
    func send(_ request: URLRequest, limit: Int) async throws(ServerFailure) -> (HTTPURLResponse, Data) {
        let transport = self.transport
        do {
            return try await RequestDeadline(seconds: configuration.requestDeadline).run {
                try await transport.data(request, limit: limit)
            }
        } catch let exceeded as RequestDeadline.Exceeded {
            throw .unreachable(exceeded.description)
        } catch is BodyTooLarge {
            throw .answer(status: 200, code: "too_large", reason: "the answer is larger than \(limit) bytes")
        } catch is CancellationError {
            throw .cancelled
        } catch let error as URLError where error.code == .cancelled {
            throw Task.isCancelled ? .cancelled : .unreachable(Self.describe(error))
        } catch {
            throw Self.networkFailure(error, url: request.url)
        }
    }

    /// A request that got no answer: `.unreachable` (transient: offline, refused, timed out), except
    /// an App Transport Security refusal of a plain-`http` URL, which no retry can change: a
    /// definite `app_transport_security` answer naming the host and the two ways out.
    static func networkFailure(_ error: any Error, url: URL?) -> ServerFailure {
        if let error = error as? URLError, error.code == .appTransportSecurityRequiresSecureConnection {
            let host = PrintableText.sanitized(url?.host ?? "the server", limit: 100)
            return .answer(status: 0, code: "app_transport_security",
                           reason: "App Transport Security refused plain http to \(host): serve it over https, or add an ATS exception for that host to the app's Info.plist")
        }
        return .unreachable(describe(error))
    }

    /// The `{"error": CODE, "reason": TEXT}` of an error answer, cut to one short printable line.
    static func failure(_ response: HTTPURLResponse, _ body: Data) -> ServerFailure {
        struct Problem: Decodable { let error: String?; let reason: String? }
        let problem = try? JSONDecoder().decode(Problem.self, from: body)
        let code = PrintableText.sanitized(problem?.error ?? "http_\(response.statusCode)", limit: 64)
        let reason = PrintableText.sanitized(problem?.reason ?? HTTPURLResponse.localizedString(forStatusCode: response.statusCode), limit: 200)
        if response.statusCode >= 500 || response.statusCode == 429 {
            return .unavailable(status: response.statusCode, reason: reason)
        }
        return .answer(status: response.statusCode, code: code, reason: reason)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .timedOut: return "timed out"
            case .cannotConnectToHost: return "connection refused"
            case .cannotFindHost, .dnsLookupFailed: return "host not found"
            case .notConnectedToInternet: return "not connected"
            case .networkConnectionLost: return "connection lost"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                 .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot: return "TLS failed"
            default: return "URL error \(error.code.rawValue)"
            }
        }
        return PrintableText.sanitized(String(describing: error), limit: 120)
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    static func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
}

/// A request that did not give a usable answer.
enum ServerFailure: Error, Sendable {
    /// No answer: the network, DNS, TLS or a timeout.
    case unreachable(String)
    /// A 5xx or 429 answer: worth trying again later.
    case unavailable(status: Int, reason: String)
    /// A definite answer that is not the one wanted (4xx, or a malformed body).
    case answer(status: Int, code: String, reason: String)
    /// The caller cancelled.
    case cancelled

    /// The same, as a reason a collection is unavailable.
    var cause: UnavailableCause {
        switch self {
        case .unreachable(let reason): return .offline(reason)
        case .unavailable(let status, let reason): return .server(status: status, code: "unavailable", reason: reason)
        case .answer(let status, let code, let reason): return .server(status: status, code: code, reason: reason)
        case .cancelled: return .cancelled
        }
    }

    /// Whether trying again may help.
    var isTransient: Bool {
        switch self {
        case .unreachable, .unavailable: return true
        case .answer, .cancelled: return false
        }
    }
}
