import CofferFormat
import Foundation
import S3TestSupport
import Testing

@testable import CofferServer

/// Clients of the anonymous blob routes that read slowly or not at all. Each body streamed holds
/// memory (and a file handle or a store connection) until its client has taken it, and the idle
/// timeout does not end a stream whose writes keep completing: without a bound, such clients held
/// them for every tenant's downloads. Now the bodies streamed at once are bounded per client
/// address (COFFER_BLOB_STREAMS_PER_ADDRESS, 429) and in all (COFFER_BLOB_STREAMS, 503), and a
/// stream's slot is given back however it ends.
@Suite("Blob bodies streamed at once")
struct BlobStreamLimitTests {
    /// Which limit the held downloads reach.
    enum Limit: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case address, server

        var testDescription: String { rawValue }
    }

    @Test("two downloads whose clients never read hold an address's limit of 2 (429) or the server's (503), with Retry-After and no-store; HEAD is still answered, another address only under the address's limit; closed, the held ones give their slots back",
          arguments: TestStore.available, Limit.allCases)
    func heldSlots(store: TestStore, limit: Limit) async throws {
        let server = try await TestServer.start(store: store) {
            $0.trustedProxies = "127.0.0.1"
            if limit == .address { $0.blobStreamsPerAddress = 2 } else { $0.blobStreams = 2 }
        }
        defer { Task { try? await server.stop() } }
        let address = try await Self.uploadLargeBlob(to: server)
        let held = try await Self.holdDownloads(2, of: address, from: server)
        defer { held.forEach { $0.close() } }

        let http = HTTP(base: server.base)
        let refused = try await http.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0"])
        #expect(refused.status == (limit == .address ? 429 : 503))
        #expect(refused.errorCode == (limit == .address ? "too_many_downloads" : "downloads_busy"))
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 > 0, "\(refused.headers)")
        #expect(refused.header("Cache-Control") == "no-store", "a CDN must not keep the refusal for the blob's year")
        // A HEAD streams nothing; another address has slots of its own, but not past the server's.
        #expect(try await http.call("HEAD", "/v1/blobs/\(address)").status == 200)
        let neighbour = try await http.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0", "X-Forwarded-For": "203.0.113.9"])
        #expect(neighbour.status == (limit == .address ? 206 : 503))

        held.forEach { $0.close() }
        try await Self.expectServedAgain(address, by: http)
    }

    @Test("a slot is given back exactly once, when the last reference to it goes; the address is refused before the server")
    func slots() throws {
        let slots = StreamSlots(limit: 3, perAddress: 2)
        var taken = try [slots.take(for: "a"), slots.take(for: "a")]
        #expect(throws: StreamSlots.Refusal.addressFull) { try slots.take(for: "a") }
        taken.append(try slots.take(for: "b"))
        #expect(throws: StreamSlots.Refusal.addressFull) { try slots.take(for: "a") }
        #expect(throws: StreamSlots.Refusal.full) { try slots.take(for: "c") }
        #expect(slots.held(by: "a").total == 3 && slots.held(by: "a").address == 2)
        taken.removeFirst()
        #expect(slots.held(by: "a").total == 2 && slots.held(by: "a").address == 1)
        taken.append(try slots.take(for: "c"))
        #expect(slots.held(by: "c").total == 3 && slots.held(by: "c").address == 1)
        taken.removeAll()
        #expect(slots.held(by: "a").total == 0 && slots.held(by: "b").address == 0 && slots.held(by: "c").address == 0)
    }

    /// A sealed model of 16 MiB, uploaded: more than a connection's socket buffers and the server's
    /// pieces in flight take, so its stream to a client that never reads does not end.
    static func uploadLargeBlob(to server: TestServer) async throws -> String {
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal([UInt8](repeating: 7, count: 16 << 20), name: "large", using: .modelKey(key)))
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed).status == 201)
        return sealed.sha256Hex
    }

    /// `count` GETs of the whole blob from 127.0.0.1 whose clients never read, each answered 200
    /// (so each holds its slot).
    static func holdDownloads(_ count: Int, of address: String, from server: TestServer) async throws -> [HeldUpload] {
        let port = try #require(server.base.port)
        var held: [HeldUpload] = []
        do {
            for _ in 0..<count {
                let download = try HeldUpload(port: port, method: "GET", path: "/v1/blobs/\(address)", headers: [], body: Data(), sent: 0,
                                              receiveBuffer: 4096)
                held.append(download)
                #expect(try await download.waitForAnswerStatus() == 200)
            }
        } catch {
            held.forEach { $0.close() }
            throw error
        }
        return held
    }

    /// Waits (up to 30 s) until a GET from 127.0.0.1 is served again: the server noticed the held
    /// connections close and their streams gave back their slots.
    static func expectServedAgain(_ address: String, by http: HTTP) async throws {
        var status = 0
        for _ in 0..<300 {
            status = try await http.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0"]).status
            if status == 206 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(status == 206, "the slots of the closed downloads were never given back")
    }
}
