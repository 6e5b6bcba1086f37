import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import CofferS3

/// ``S3Client/pipeObject(key:bytes:on:into:)``: the bytes asked for reach the sink, on its event
/// loop, one piece at a time; every answer that is not exactly those bytes fails it.
@Suite struct S3PipeTests {
    /// What a sink received, and whether it was ever called on another loop or while a piece was
    /// still being taken.
    final class Received: Sendable {
        let state = NIOLockedValueBox((bytes: ByteBuffer(), pieces: 0, offLoop: 0, overlapping: 0, busy: false))
    }

    /// Pipes `bytes` of `key` into a sink on `loop` that takes each piece after `delay` (a slow
    /// device) or fails at piece `failAt`; returns what it received.
    static func pipe(_ client: S3Client, key: String, bytes: Range<Int64>, on loop: any EventLoop,
                     delay: TimeAmount? = nil, failAt: Int? = nil) async throws -> Received {
        let received = Received()
        try await client.pipeObject(key: key, bytes: bytes, on: loop) { piece in
            let count = received.state.withLockedValue { state -> Int in
                if !loop.inEventLoop { state.offLoop += 1 }
                if state.busy { state.overlapping += 1 }
                state.busy = true
                var piece = piece
                state.bytes.writeBuffer(&piece)
                state.pieces += 1
                return state.pieces
            }
            if count == failAt { return loop.makeFailedFuture(SinkGone()) }
            guard let delay else {
                received.state.withLockedValue { $0.busy = false }
                return loop.makeSucceededVoidFuture()
            }
            return loop.scheduleTask(in: delay) { received.state.withLockedValue { $0.busy = false } }.futureResult
        }.get()
        return received
    }

    struct SinkGone: Error, Equatable {}

    /// A group the HTTP client does not use (kept for the test process's life).
    static let otherGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    @Test(.enabled(if: S3TestStore.configured, "needs a test store"))
    func theBytesAskedForArriveOnTheSinksLoop() async throws {
        try await S3TestStore.withBucket { client, http in
            let body = S3IntegrationTests.bytes(3 * 1024 * 1024 + 11, seed: 9)
            try await client.putObject(key: "blobs/piped", body: body)
            // A loop of the HTTP client's own group (the store's connection is read on it), and a loop
            // of another group (the pieces are handed over to it).
            let other = Self.otherGroup
            for loop in [http.eventLoopGroup.next(), other.next()] {
                let range: Range<Int64> = 10..<Int64(body.readableBytes)
                let received = try await Self.pipe(client, key: "blobs/piped", bytes: range, on: loop)
                let state = received.state.withLockedValue { $0 }
                #expect(state.bytes == body.getSlice(at: 10, length: body.readableBytes - 10))
                #expect(state.offLoop == 0)
                #expect(state.pieces > 1)
                let whole = try await Self.pipe(client, key: "blobs/piped", bytes: 0..<Int64(body.readableBytes), on: loop)
                #expect(whole.state.withLockedValue { $0.bytes } == body)
            }

            // A slow sink: no piece is handed over before the previous one was taken.
            let slow = try await Self.pipe(client, key: "blobs/piped", bytes: 0..<1_000_000, on: other.next(), delay: .milliseconds(5))
            let state = slow.state.withLockedValue { $0 }
            #expect(state.bytes == body.getSlice(at: 0, length: 1_000_000))
            #expect(state.overlapping == 0)

            // A sink that fails (the device went away) stops the download with its own error.
            await #expect(throws: SinkGone()) {
                _ = try await Self.pipe(client, key: "blobs/piped", bytes: 0..<Int64(body.readableBytes), on: other.next(), failAt: 2)
            }

            // A missing object, and a range past the end.
            await #expect(throws: S3Error.unexpectedResponse(operation: "GetObject", status: 404, code: "NoSuchKey")) {
                _ = try await Self.pipe(client, key: "blobs/none", bytes: 0..<10, on: other.next())
            }
            await #expect(throws: S3Error.self) {
                _ = try await Self.pipe(client, key: "blobs/piped", bytes: 4_000_000..<4_000_010, on: other.next())
            }
        }
    }

    @Test func answersOtherThanTheBytesAskedForFail() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let ten = ByteBuffer(repeating: 1, count: 10)
        let cases: [(CannedStore.Answer, Range<Int64>, S3Error)] = [
            (.init(status: .partialContent, headers: [("Content-Range", "bytes 0-9/100")], body: ten), 5..<15,
             .malformedResponse(operation: "GetObject", reason: "a 206 without the Content-Range asked for")),
            (.init(status: .partialContent, body: ten), 0..<10,
             .malformedResponse(operation: "GetObject", reason: "a 206 without the Content-Range asked for")),
            (.init(status: .ok, body: ten), 5..<15,
             .malformedResponse(operation: "GetObject", reason: "the whole object instead of the range asked for")),
            (.init(status: .partialContent, headers: [("Content-Range", "bytes 0-9/100")], body: ten), 0..<20,
             .malformedResponse(operation: "GetObject", reason: "a Content-Length other than the 20 bytes asked for")),
            (.init(status: .internalServerError, body: ByteBuffer(string: "<Error><Code>InternalError</Code></Error>")), 0..<10,
             .unexpectedResponse(operation: "GetObject", status: 500, code: "InternalError")),
            (.init(status: .forbidden, body: ByteBuffer(string: "<Error><Code>AccessDenied</Code></Error>")), 0..<10,
             .accessDenied(operation: "GetObject", bucket: "canned")),
        ]
        for (answer, range, expected) in cases {
            try await S3ClientCannedTests.withStore({ _ in answer }) { client, store in
                await #expect(throws: expected) {
                    _ = try await Self.pipe(client, key: "k", bytes: range, on: loop)
                }
                let request = try #require(store.requests.first)
                #expect(request.head.headers["range"] == ["bytes=\(range.lowerBound)-\(range.upperBound - 1)"])
            }
        }
        // A body that breaks off before its Content-Length: interrupted, and what arrived is not
        // passed off as the whole.
        let cut = CannedStore.Answer(status: .partialContent, headers: [("Content-Range", "bytes 0-99/100")], body: ten, announcedLength: 100)
        try await S3ClientCannedTests.withStore({ _ in cut }) { client, _ in
            let error = await #expect(throws: S3Error.self) {
                _ = try await Self.pipe(client, key: "k", bytes: 0..<100, on: loop)
            }
            guard case .interrupted(operation: "GetObject", _) = error else {
                Issue.record("expected interrupted, got \(String(describing: error))")
                return
            }
        }
        // An empty range is refused before anything is sent.
        await #expect(throws: S3Error.self) {
            try await S3ClientCannedTests.withStore({ _ in .init() }) { client, store in
                defer { #expect(store.requests.isEmpty) }
                _ = try await Self.pipe(client, key: "k", bytes: 5..<5, on: loop)
            }
        }
    }
}
