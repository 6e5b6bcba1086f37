import Coffer
import Foundation
import Testing

/// A host that ignores Range and cuts every answer a little past where the device asked to start:
/// each try writes the file again from byte 0 and ends a few bytes further. The SDK counted that
/// as progress and tried again at once, for ever (a 1 GiB model: a billion tries, each rewriting
/// and hashing what it had); a try that started the file again is no progress now.
@Suite("A host that restarts every download and cuts it short")
struct CreepingHostTests {
    @Test("answers that start the file again and end short use up the retries: the update fails after a few requests")
    func creepingAnswersFail() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier-large")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        // Range removed on its way (the server answers 200 and the whole blob), and the answer
        // cut 1000 bytes past the first byte asked for.
        proxy.setRequestRule { method, path in method == "GET" && path.hasPrefix("/v1/blobs/") ? ["range"] : [] }
        proxy.setRule { method, path, headers, status, _ in
            guard method == "GET", path.hasPrefix("/v1/blobs/"), status == 200 else { return .forward }
            let first = headers["range"].flatMap { $0.dropFirst(6).split(separator: "-").first }.flatMap { Int($0) } ?? 0
            return .cut(after: first + 1000)
        }
        let client = try CofferClient(configuration: fleet.configuration(fleet.folder("creeping"), server: proxy.url, retries: 4))
        await #expect(throws: (any Error).self) { _ = try await client.beginAccessing(identifier: "FlowerModels") }
        let blobRequests = proxy.takeLog().filter { $0.method == "GET" && $0.path.hasPrefix("/v1/blobs/") }.count
        // Before: a request for every 1000 bytes of the 300 000-byte model, each writing the file again.
        #expect(blobRequests <= 12, "\(blobRequests) blob requests")
    }
}
