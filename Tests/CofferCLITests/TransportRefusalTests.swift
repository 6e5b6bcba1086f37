import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Coffer

/// How a transport's network errors reach the app: a refusal no retry can change (App Transport
/// Security on Apple platforms, which refuses plain http before any byte leaves) is a definite
/// answer that blob downloads do not repeat; a lost network is offline and transient. A transport that throws stands in
/// for URLSession here: ATS exists only on Apple platforms.
@Suite("Transport refusals")
struct TransportRefusalTests {
    /// Throws `code` for every request and counts them.
    final class RefusingTransport: CofferTransport, @unchecked Sendable {
        let code: URLError.Code
        private let lock = NSLock()
        private var sent = 0
        init(_ code: URLError.Code) { self.code = code }
        var requests: Int { lock.withLock { sent } }
        func stream(_ request: URLRequest, consume: @escaping @Sendable (HTTPURLResponse, Data) throws -> Void) async throws -> HTTPURLResponse {
            lock.withLock { sent += 1 }
            throw URLError(code)
        }
    }

    static func client(_ transport: RefusingTransport) throws -> (CofferClient, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-ats-\(UUID().uuidString)")
        var configuration = try CofferConfiguration(serverURL: URL(string: "http://127.0.0.1:9")!, appID: UUID().uuidString,
                                                    credential: "c", publicKey: "q3Jv8yE6kQ4m6Zl2Qm9C1j0s8mQ5dJc9yT3lQm2bW1E=",
                                                    cacheDirectory: folder)
        configuration.transport = transport
        configuration.retry = RetryPolicy(attempts: 3, initialDelay: 0.01, maximumDelay: 0.01)
        return (try CofferClient(configuration: configuration), folder)
    }

    @Test("an App Transport Security refusal is a definite 'app_transport_security' answer naming the host, not transient")
    func appTransportSecurity() async throws {
        let transport = RefusingTransport(.appTransportSecurityRequiresSecureConnection)
        let (client, folder) = try Self.client(transport)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: CofferError.self) { try await client.beginAccessing(identifier: "FlowerModels") }
        guard case .collectionUnavailable(_, .server(let status, let code, let reason)) = error else {
            Issue.record("expected a server answer, got \(String(describing: error))")
            return
        }
        #expect(status == 0 && code == "app_transport_security")
        #expect(reason.contains("127.0.0.1") && reason.contains("Info.plist"))
        #expect(transport.requests == 1)
        #expect(!DeviceAPI.networkFailure(URLError(.appTransportSecurityRequiresSecureConnection), url: nil).isTransient)
    }

    @Test("a refused connection is offline: transient, so blob downloads try it again")
    func refusedConnection() async throws {
        let transport = RefusingTransport(.cannotConnectToHost)
        let (client, folder) = try Self.client(transport)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: CofferError.self) { try await client.beginAccessing(identifier: "FlowerModels") }
        guard case .collectionUnavailable(_, .offline(let reason)) = error else {
            Issue.record("expected offline, got \(String(describing: error))")
            return
        }
        #expect(reason == "connection refused")
        // The blob downloads' retry loop asks `isTransient` (manifest requests are not repeated).
        #expect(DeviceAPI.networkFailure(URLError(.cannotConnectToHost), url: nil).isTransient)
    }
}
