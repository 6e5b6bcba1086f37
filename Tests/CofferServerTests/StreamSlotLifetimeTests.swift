import Foundation
import NIOCore
import NIOEmbedded
import Testing
import Vapor

@testable import CofferServer

/// A blob download's stream slot is held until the work producing its body has ended, not until
/// its response goes. Vapor lets a response go as soon as its write fails, and when the client has
/// gone before the response was written it still runs the body: the folder's reading task, or a
/// bucket's download through ``S3DownloadRelay``. Given back with the response, the slot left that
/// store read outside COFFER_BLOB_STREAMS and COFFER_BLOB_STREAMS_PER_ADDRESS, so a client opening
/// and abandoning downloads quickly could have more store reads in flight than the bound.
@Suite("Stream slots held until the body's work ends")
struct StreamSlotLifetimeTests {
    /// The client's connection closed.
    struct ClientGone: Error {}

    /// A device connection as ``S3DownloadRelay`` sees it, on an `EmbeddedEventLoop`: each piece's
    /// write waits until ``takeAll()``, or fails at once when the client is ``gone`` (as Vapor's
    /// writer does for a body it runs after the response's write failed); the end or error written
    /// is kept in ``ended``.
    final class HeldWrites: BodyStreamWriter, @unchecked Sendable {
        let eventLoop: any EventLoop
        /// Whether the client has gone: its writes fail at once.
        let gone: Bool
        /// The writes of pieces the client has not taken yet.
        private var waiting: [EventLoopPromise<Void>] = []
        /// `end` or `error` once the relay ended the answer.
        private(set) var ended: String?

        init(on loop: EmbeddedEventLoop, gone: Bool) {
            eventLoop = loop
            self.gone = gone
        }

        func write(_ result: BodyStreamResult, promise: EventLoopPromise<Void>?) {
            switch result {
            case .buffer:
                if gone { promise?.fail(ClientGone()) } else if let promise { waiting.append(promise) }
            case .end:
                ended = "end"
                promise?.succeed()
            case .error(let error):
                ended = "error"
                promise?.fail(error)
            }
        }

        /// The client takes every piece written so far.
        func takeAll() {
            let taken = waiting
            waiting = []
            taken.forEach { $0.succeed() }
        }
    }

    @Test("a folder body keeps its slot while its reading task runs, though its response was let go first, and gives it back when the task ends")
    func folderReadingHoldsItsSlot() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-slot-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try FolderBlobStore(root: root)
        let address = String(repeating: "ab", count: 32)
        let path = store.path(of: address)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let size = 3 << 20
        try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
        let slots = StreamSlots(limit: 4, perAddress: 1)
        // The body's writes go through a held loop: its reading task cannot end until it is let go.
        let held = HeldEventLoop()
        defer { Task { try? await held.close() } }

        var response: Response? = store.stream(address, range: 0..<Int64(size), status: .ok, metrics: ServerMetrics(),
                                                holding: try slots.take(for: "a"))
        let collected = try #require(response).body.collect(on: held.loop)
        // What Vapor does when the response's write fails (the client gone): the response goes, the body runs on.
        response = nil
        #expect(slots.held(by: "a").address == 1, "the slot was given back with the response while its file was still being read")
        #expect(throws: StreamSlots.Refusal.addressFull) { try slots.take(for: "a") }

        held.release()
        let body = try await collected.get()
        #expect(body?.readableBytes == size)
        #expect(slots.held(by: "a").total == 0 && slots.held(by: "a").address == 0, "the slot is given back when the reading task ends")
    }

    @Test("a bucket download whose client had gone before the answer was written keeps its slot until the store's answer ends, then gives it back once")
    func relayHoldsItsSlotWhenTheClientIsGone() throws {
        let loop = EmbeddedEventLoop()
        let writes = HeldWrites(on: loop, gone: true)
        let slots = StreamSlots(limit: 4, perAddress: 1)
        var relay: S3DownloadRelay? = S3DownloadRelay(writer: writes, metrics: ServerMetrics(), holding: try slots.take(for: "a"))

        _ = relay?.accept(ByteBuffer(repeating: 7, count: S3BlobStore.coalesced))
        loop.run()
        #expect(slots.held(by: "a").address == 1, "the store's answer is still arriving: its download holds the slot")

        relay?.finish(.failure(ClientGone()))
        loop.run()
        #expect(writes.ended == "error")
        #expect(slots.held(by: "a").total == 0 && slots.held(by: "a").address == 0)
        relay = nil
        #expect(slots.held(by: "a").total == 0, "the relay going after its release gives back nothing more")
    }

    @Test("a complete bucket download to a slow client keeps its slot until the connection has taken the last piece, and writes its end then")
    func relayHoldsItsSlotUntilTheLastPieceIsTaken() throws {
        let loop = EmbeddedEventLoop()
        let writes = HeldWrites(on: loop, gone: false)
        let slots = StreamSlots(limit: 4, perAddress: 1)
        var relay: S3DownloadRelay? = S3DownloadRelay(writer: writes, metrics: ServerMetrics(), holding: try slots.take(for: "a"))

        _ = relay?.accept(ByteBuffer(repeating: 7, count: S3BlobStore.coalesced))
        relay?.finish(.success(()))
        loop.run()
        #expect(writes.ended == nil && slots.held(by: "a").address == 1, "the last piece is still this download's memory")

        writes.takeAll()
        loop.run()
        #expect(writes.ended == "end")
        #expect(slots.held(by: "a").total == 0 && slots.held(by: "a").address == 0)
        relay = nil
        #expect(slots.held(by: "a").total == 0, "the relay going after its release gives back nothing more")
    }

    @Test("release gives a slot back once: a second release and the end of its last reference give back nothing more")
    func releaseIsOnce() throws {
        let slots = StreamSlots(limit: 4, perAddress: 2)
        var slot: StreamSlot? = try slots.take(for: "a")
        let other = try slots.take(for: "a")
        slot?.release()
        #expect(slots.held(by: "a").total == 1 && slots.held(by: "a").address == 1)
        slot?.release()
        slot = nil
        #expect(slots.held(by: "a").total == 1 && slots.held(by: "a").address == 1, "the other download's slot is still held")
        withExtendedLifetime(other) {}
    }
}
