@testable import Coffer
import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Background downloads (issue 19). Linux has no background `URLSession`: the transport runs the
/// same code over a foreground session here ("Linux stand-in" in the names), which exercises piece
/// scheduling, staging, adoption, re-attachment by key and cancellation; what only Apple's
/// background daemon does (running while suspended, relaunch events) an Apple build must check.
@Suite("Background downloads")
struct BackgroundDownloadTests {
    @Test("pieces sit on fixed boundaries, also when a download resumes mid-piece, without overflow")
    func pieceScheduling() {
        let size = BlobFetcher.pieceSize
        #expect(BlobFetcher.pieces(from: 0, size: 0).isEmpty)
        #expect(BlobFetcher.pieces(from: 0, size: 10) == [0...9])
        #expect(BlobFetcher.pieces(from: 0, size: 2 * size + 1) == [0...(size - 1), size...(2 * size - 1), (2 * size)...(2 * size)])
        // Resumed inside the first piece: the rest of it, then the same pieces as from the start.
        #expect(BlobFetcher.pieces(from: 5, size: 2 * size) == [5...(size - 1), size...(2 * size - 1)])
        #expect(BlobFetcher.pieceEnd(after: UInt64.max - 1, size: UInt64.max) == UInt64.max)
        #expect(BlobFetcher.pieces(from: 10, size: 10).isEmpty)
    }

    @Test("a staged piece keeps its status and the headers the SDK reads; garbage is not adopted; old pieces are swept")
    func stagedPieces() throws {
        let pieces = StagedPieces(folder: Self.folder("staged"))
        defer { try? FileManager.default.removeItem(at: pieces.folder) }
        var request = URLRequest(url: URL(string: "https://models.example.com/v1/blobs/abc?x=1")!)
        request.setValue("bytes=0-3", forHTTPHeaderField: "Range")
        let key = StagedPieces.key(for: request)
        #expect(StagedPieces.isKey(key) && !key.contains("example"))
        request.setValue("bytes=4-7", forHTTPHeaderField: "Range")
        #expect(StagedPieces.key(for: request) != key)

        let download = Self.folder("download").appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: download.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("abcd".utf8).write(to: download)
        let response = HTTPURLResponse(url: request.url!, statusCode: 206, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Range": "bytes 0-3/8", "Set-Cookie": "secret=1"])!
        try pieces.store(download, response: response, key: key)
        #expect(!FileManager.default.fileExists(atPath: download.path))
        let (stored, body) = try #require(pieces.piece(key))
        #expect(stored.statusCode == 206)
        #expect(stored.value(forHTTPHeaderField: "Content-Range") == "bytes 0-3/8")
        #expect(stored.value(forHTTPHeaderField: "Set-Cookie") == nil)
        var fed = Data()
        try StagedPieces.feed(body, response: stored) { _, data in fed.append(data) }
        #expect(fed == Data("abcd".utf8))

        // A key that is not one, and a head that is not JSON or too long, are not adopted.
        #expect(throws: (any Error).self) { try pieces.store(download, response: response, key: "../x") }
        let head = pieces.folder.appendingPathComponent(key + ".head")
        try Data("{not json".utf8).write(to: head)
        #expect(pieces.piece(key) == nil)
        try Data(repeating: 0x20, count: StagedPieces.headLimit + 1).write(to: head)
        #expect(pieces.piece(key) == nil)

        // Resume data is used once.
        pieces.storeResumeData(Data("resume".utf8), key: key)
        #expect(pieces.takeResumeData(key) == Data("resume".utf8))
        #expect(pieces.takeResumeData(key) == nil)

        pieces.sweep(olderThan: 3600, now: Date().addingTimeInterval(7200))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: pieces.folder.path))?.isEmpty ?? true)
    }

    @Test("a download resumed from the system's resume data is the whole piece only when its file is")
    func resumedPieces() {
        // The resumed request's answer covers the tail; the file holds the whole piece.
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-199", contentRange: "bytes 150-199/1000", fileSize: 100) == "bytes 100-199/1000")
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-199", contentRange: "bytes 150-199/*", fileSize: 100) == "bytes 100-199/*")
        // Anything else stays as it came (and is then checked, and refused, as always).
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-199", contentRange: "bytes 150-199/1000", fileSize: 50) == nil)
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-199", contentRange: "bytes 150-198/1000", fileSize: 100) == nil)
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-199", contentRange: "bytes 100-199/1000", fileSize: 100) == nil)
        #expect(StagedPieces.resumedContentRange(asked: "bytes=100-", contentRange: "bytes 150-199/1000", fileSize: 100) == nil)
        #expect(StagedPieces.resumedContentRange(asked: "bytes=0-18446744073709551615", contentRange: "bytes 1-18446744073709551615/*", fileSize: 0) == nil)
    }

    @Test("resume data is kept only for a task that was not redirected (a presigned target expires)")
    func resumeDataAfterRedirect() throws {
        let blob = try #require(URL(string: "https://models.example.com/v1/device/blobs/abc"))
        let presigned = try #require(URL(string: "https://bucket.example.net/blobs/abc?X-Amz-Expires=300"))
        #expect(BackgroundTransport.keepsResumeData(asked: blob, answering: blob))
        #expect(!BackgroundTransport.keepsResumeData(asked: blob, answering: presigned))
        #expect(!BackgroundTransport.keepsResumeData(asked: blob, answering: nil))
        #expect(!BackgroundTransport.keepsResumeData(asked: nil, answering: nil))
    }

    @Test("a piece finished while the app was not running is adopted without a request (Linux stand-in)")
    func adoptsStagedPiece() async throws {
        let settings = BackgroundDownloads(identifier: "test.adopt.\(UUID().uuidString)", stagingDirectory: Self.folder("adopt"))
        defer { try? FileManager.default.removeItem(at: settings.stagingDirectory) }
        // Nothing listens on port 9 of this machine: only a staged piece can answer.
        var request = URLRequest(url: URL(string: "http://127.0.0.1:9/v1/blobs/\(String(repeating: "a", count: 64))")!)
        request.setValue("bytes=0-4", forHTTPHeaderField: "Range")
        let key = StagedPieces.key(for: request)
        let file = Self.folder("adopt-download")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: file.appendingPathComponent("f"))
        try StagedPieces(folder: settings.stagingDirectory).store(
            file.appendingPathComponent("f"),
            response: HTTPURLResponse(url: request.url!, statusCode: 206, httpVersion: nil, headerFields: ["Content-Range": "bytes 0-4/5"])!,
            key: key)
        let transport = BackgroundSessions.transport(for: settings, timeout: 5)
        let collected = Collected()
        let response = try await transport.stream(request) { _, data in collected.append(data) }
        #expect(response.statusCode == 206 && collected.data == Data("hello".utf8))
        // Adopted once: the staging folder is empty, and the next ask goes to the network (and fails).
        #expect(StagedPieces(folder: settings.stagingDirectory).piece(key) == nil)
        await #expect(throws: (any Error).self) { _ = try await transport.stream(request) { _, _ in } }
    }

    @Test("a cancelled wait leaves the download running; its piece is adopted later (Linux stand-in)")
    func cancelledWaitKeepsDownload() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let sha = try #require(fleet.flowers.sha["classifier"])
        let plain = try #require(fleet.session.cli.read("classifier.coffer"))
        let settings = BackgroundDownloads(identifier: "test.cancel.\(UUID().uuidString)", stagingDirectory: Self.folder("cancel"))
        defer { try? FileManager.default.removeItem(at: settings.stagingDirectory) }
        let transport = BackgroundSessions.transport(for: settings, timeout: 30)
        // The answer is held until the wait was cancelled, so the download is still running then.
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let gate = Gate()
        defer { gate.open() }
        proxy.setRule { method, path, _, _, _ in method == "GET" && path.hasPrefix("/v1/blobs/") ? .hold(gate) : .forward }
        var request = URLRequest(url: URL(string: proxy.url + "/v1/blobs/" + sha)!)
        request.setValue("bytes=0-\(plain.count - 1)", forHTTPHeaderField: "Range")
        let key = StagedPieces.key(for: request)
        let waiting = Task { try await transport.stream(request) { _, _ in } }
        _ = try await SDKFleet.within(60) {
            while !transport.isDownloading(key) { try await Task.sleep(nanoseconds: 1_000_000) }
            return true
        }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(transport.isDownloading(key))
        gate.open()
        let staged = try await SDKFleet.within(60) {
            while StagedPieces(folder: settings.stagingDirectory).piece(key) == nil { try await Task.sleep(nanoseconds: 20_000_000) }
            return true
        }
        #expect(staged)
        let collected = Collected()
        let response = try await transport.stream(request) { _, data in collected.append(data) }
        #expect(response.statusCode == 206 && collected.data == plain)
    }

    @Test("a client with background downloads syncs through staged pieces and leaves none behind (Linux stand-in)")
    func clientSyncs() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("background-cache")
        var configuration = try fleet.configuration(cache)
        let staging = Self.folder("client")
        configuration.backgroundDownloads = BackgroundDownloads(identifier: "test.client.\(UUID().uuidString)", stagingDirectory: staging)
        let activity = RecordingActivity()
        configuration.backgroundActivity = activity
        let collection = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(try await collection.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: staging.path))?.isEmpty ?? true)
        // Both models came through the background session's staged pieces.
        #expect(BackgroundSessions.transport(for: configuration.backgroundDownloads!, timeout: 60).adoptedPieces == 2)
        // The update ran inside one background activity, ended with it.
        #expect(activity.begun == 1 && activity.ended == 1)
    }

    @Test("a redirect to object storage is followed through the background transport, without credentials (Linux stand-in)")
    func followsRedirect() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let hosts = try BlobRedirectTests.Hosts(upstreamPort: fleet.session.server.port)
        defer { hosts.stop() }
        var configuration = try fleet.configuration(fleet.folder("background-redirect"), server: hosts.front.url)
        configuration.backgroundDownloads = BackgroundDownloads(identifier: "test.redirect.\(UUID().uuidString)", stagingDirectory: Self.folder("redirect"))
        let collection = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        // Each model was asked at the server, which redirected it to the store (a presigned-looking
        // URL); the store served it to a request without credentials.
        #expect(BlobRedirectTests.blobGets(hosts.front.takeLog()).count == 2)
        let served = BlobRedirectTests.blobGets(hosts.store.takeLog())
        #expect(served.count == 2)
        #expect(served.allSatisfy { $0.path.hasSuffix("?X-Amz-Signature=presigned") && $0.status == 206 && $0.headers["authorization"] == nil })
    }

    @Test("the app delegate's background events: this SDK's sessions are taken and their handler called once delivered")
    @MainActor
    func backgroundEvents() async throws {
        #expect(!CofferClient.handleEventsForBackgroundURLSession("com.example.other") {})
        // The default identifier is this SDK's even before a client made its session; no session
        // is made with settings the app did not choose.
        #expect(CofferClient.handleEventsForBackgroundURLSession(BackgroundDownloads.defaultIdentifier) {})
        let settings = BackgroundDownloads(identifier: "test.events.\(UUID().uuidString)", stagingDirectory: Self.folder("events"))
        _ = BackgroundSessions.transport(for: settings, timeout: 5)
        var called = 0
        #expect(CofferClient.handleEventsForBackgroundURLSession(settings.identifier) { called += 1 })
        #expect(called == 0)
        BackgroundSessions.eventsDelivered(settings.identifier)
        #expect(called == 1)
        // A later delivery with no handler waiting calls nothing now (and is remembered, below).
        BackgroundSessions.eventsDelivered(settings.identifier, now: Date(timeIntervalSince1970: 1_000))
        #expect(called == 1)
        // The app delegate's handler arriving after its session already delivered (the client made
        // the session at launch, before UIKit called the delegate) is called at once, not lost.
        var late = 0
        #expect(BackgroundSessions.handleEvents(settings.identifier, now: Date(timeIntervalSince1970: 1_005)) { late += 1 })
        #expect(late == 1)
        // Only once: the next handler waits for its own events.
        var next = 0
        #expect(BackgroundSessions.handleEvents(settings.identifier, now: Date(timeIntervalSince1970: 1_006)) { next += 1 })
        #expect(next == 0)
        BackgroundSessions.eventsDelivered(settings.identifier, now: Date(timeIntervalSince1970: 1_010))
        #expect(next == 1)
        // A delivery long before a handler is about other events: that handler waits.
        BackgroundSessions.eventsDelivered(settings.identifier, now: Date(timeIntervalSince1970: 2_000))
        var stale = 0
        #expect(BackgroundSessions.handleEvents(settings.identifier, now: Date(timeIntervalSince1970: 2_000 + BackgroundSessions.earlyDeliveryWindow + 1)) { stale += 1 })
        #expect(stale == 0)
        BackgroundSessions.eventsDelivered(settings.identifier)
        #expect(stale == 1)
    }

    @Test("a piece's answer may leave only what its request can use: a 206 its range, a 200 the blob")
    func pieceLimits() {
        #expect(StagedPieces.limit(status: 206, asked: "bytes=100-199", total: 1000) == 100)
        #expect(StagedPieces.limit(status: 200, asked: "bytes=100-199", total: 1000) == 1000)
        #expect(StagedPieces.limit(status: 200, asked: "bytes=100-199", total: nil) == 200)
        // A server that ignores Range answers every prefetched piece with the whole blob: only the
        // piece from byte 0 (or one the SDK waits for) may keep it, not each of the others.
        #expect(StagedPieces.limit(status: 200, asked: "bytes=0-99", total: 1000, waits: false) == 1000)
        #expect(StagedPieces.limit(status: 200, asked: "bytes=100-199", total: 1000, waits: false) == StagedPieces.otherAnswerLimit)
        #expect(StagedPieces.limit(status: 206, asked: "bytes=100-199", total: 1000, waits: false) == 100)
        #expect(StagedPieces.limit(status: 404, asked: "bytes=100-199", total: 1000) == StagedPieces.otherAnswerLimit)
        for asked in [nil, "", "bytes=", "bytes=5-4", "bytes=-5", "bytes=1-2-3", "items=0-1", "bytes=0-18446744073709551615"] {
            #expect(StagedPieces.limit(status: 206, asked: asked, total: 10) == nil, "\(asked ?? "nil")")
        }
        let key = String(repeating: "ab", count: 32)
        #expect(StagedPieces.described(StagedPieces.describe(key: key, total: 123))! == (key, 123, false))
        #expect(StagedPieces.described(StagedPieces.describe(key: key, total: 123, prefetched: true))! == (key, 123, true))
        #expect(StagedPieces.described(StagedPieces.describe(key: key, total: nil))! == (key, nil, false))
        #expect(StagedPieces.described(key + " x") == nil && StagedPieces.described(nil) == nil)
        #expect(StagedPieces.described(key + " 5 x") == nil)
    }

    @Test("a mirror that sends more than a piece asked for fills no disk: the download stops, nothing is staged (Linux stand-in)")
    func oversizedPiece() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let sha = try #require(fleet.flowers.sha["classifier"])
        let sealed = try #require(fleet.session.cli.read("classifier.coffer"))
        let settings = BackgroundDownloads(identifier: "test.oversized.\(UUID().uuidString)", stagingDirectory: Self.folder("oversized"))
        defer { try? FileManager.default.removeItem(at: settings.stagingDirectory) }
        let transport = BackgroundSessions.transport(for: settings, timeout: 30)
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        // The right Content-Range, and 8 MiB more body than it names.
        proxy.setRule { method, path, _, _, body in
            method == "GET" && path.hasPrefix("/v1/blobs/") ? .replaceBody(body + Data(count: 8 << 20)) : .forward
        }
        var request = URLRequest(url: URL(string: proxy.url + "/v1/blobs/" + sha)!)
        request.setValue("bytes=0-\(sealed.count - 1)", forHTTPHeaderField: "Range")
        await transport.prefetch([request], total: UInt64(sealed.count))
        let collected = Collected()
        await #expect(throws: URLError.self) { _ = try await transport.stream(request) { _, data in collected.append(data) } }
        #expect(collected.data.isEmpty)
        #expect(StagedPieces(folder: settings.stagingDirectory).piece(StagedPieces.key(for: request)) == nil)
        let left = (try? FileManager.default.contentsOfDirectory(atPath: settings.stagingDirectory.path)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a host that ignores Range answers each prefetched piece with the whole blob: only the piece from byte 0 keeps it (Linux stand-in)")
    func rangeIgnoringHostStagesTheBlobOnce() async throws {
        try await Self.withRangeIgnoringHost("ignore-range") { blob, transport, requests, settings in
            let size = blob.count
            await transport.prefetch(requests, total: UInt64(size))
            let keys = requests.map { StagedPieces.key(for: $0) }
            let deadline = Date().addingTimeInterval(60)
            while keys.contains(where: { transport.isDownloading($0) }), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!keys.contains { transport.isDownloading($0) }, "the prefetched pieces ended within a minute")
            // The piece from byte 0 is staged whole (the SDK writes the file from the start with it);
            // the others were stopped past the limit of an answer no piece can use, and nothing of
            // them is staged (before: each kept the whole blob, 3 MiB per 1 MiB piece).
            let staged = StagedPieces(folder: settings.stagingDirectory)
            #expect(staged.piece(keys[0]) != nil)
            for key in keys.dropFirst() { #expect(staged.piece(key) == nil) }
            let first = Collected()
            let answer = try await transport.stream(requests[0]) { _, data in first.append(data) }
            #expect(answer.statusCode == 200 && first.data == blob)
            let left = (try? FileManager.default.contentsOfDirectory(atPath: settings.stagingDirectory.path)) ?? []
            #expect(left.isEmpty, "\(left)")
            // A download resumed past byte 0 prefetches from there: its first piece, which it waits
            // for next, may take the whole blob (it writes the file again from it); the rest may not.
            await transport.prefetch(Array(requests.dropFirst()), total: UInt64(size))
            let resumeDeadline = Date().addingTimeInterval(60)
            while keys.contains(where: { transport.isDownloading($0) }), Date() < resumeDeadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(staged.piece(keys[1]) != nil && staged.piece(keys[2]) == nil)
            let resumed = Collected()
            #expect(try await transport.stream(requests[1]) { _, data in resumed.append(data) }.statusCode == 200 && resumed.data == blob)
            // One the SDK waits for without a prefetch may take it too.
            let waited = Collected()
            let again = try await transport.stream(requests[2]) { _, data in waited.append(data) }
            #expect(again.statusCode == 200 && waited.data == blob)
        }
    }

    /// A prefetched piece the download begins to wait for before its answer arrives is the piece
    /// the download needs: a Range-ignoring host's `200` is then kept whole for it, as for a piece
    /// asked on demand, instead of the prefetch's limit stopping it and its waiter hearing
    /// `dataLengthExceedsMaximum` (before: that error, and a try spent).
    @Test("a prefetched piece the download waits for may take a Range-ignoring host's whole blob", .timeLimit(.minutes(2)))
    func waitingForAPrefetchedPieceLiftsItsLimit() async throws {
        try await Self.withRangeIgnoringHost("ignore-range-late") { blob, transport, requests, settings in
            let size = blob.count
            await transport.prefetch(requests, total: UInt64(size))
            let keys = requests.map { StagedPieces.key(for: $0) }
            // The host answers a second after each request: the wait below joins piece 1's prefetched task.
            #expect(transport.isDownloading(keys[1]))
            let waited = Collected()
            let answer = try await transport.stream(requests[1]) { _, data in waited.append(data) }
            #expect(answer.statusCode == 200 && waited.data == blob)
            // The piece nobody waited for still stops at the prefetch's limit.
            let deadline = Date().addingTimeInterval(60)
            while transport.isDownloading(keys[2]), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(StagedPieces(folder: settings.stagingDirectory).piece(keys[2]) == nil)
        }
    }

    /// A 3 MiB blob served by a ``RangeIgnoringHost`` in `mode`, a background transport, and the
    /// requests of the blob's three 1 MiB pieces; all of it removed after `body`.
    static func withRangeIgnoringHost(_ mode: String,
                                      _ body: (Data, BackgroundTransport, [URLRequest], BackgroundDownloads) async throws -> Void) async throws {
        let work = Self.folder(mode + "-file")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let size = 3 << 20, piece = 1 << 20
        let blob = CLI.randomData(size)
        let file = work.appendingPathComponent("blob")
        try blob.write(to: file)
        guard let host = await RangeIgnoringHost.start(mode, serving: file.path) else { return }
        defer { host.stop() }
        let settings = BackgroundDownloads(identifier: "test.\(mode).\(UUID().uuidString)", stagingDirectory: Self.folder(mode))
        defer { try? FileManager.default.removeItem(at: settings.stagingDirectory) }
        let transport = BackgroundSessions.transport(for: settings, timeout: 30)
        let requests = stride(from: 0, to: size, by: piece).map { start -> URLRequest in
            var request = URLRequest(url: URL(string: host.url + "/v1/blobs/" + String(repeating: "c", count: 64))!)
            request.setValue("bytes=\(start)-\(start + piece - 1)", forHTTPHeaderField: "Range")
            return request
        }
        try await body(blob, transport, requests, settings)
    }

    static func folder(_ name: String) -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("coffer-bg-\(name)-\(UUID().uuidString)", isDirectory: true)
    }
}

/// Bytes a consumer received.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()
    func append(_ data: Data) { lock.withLock { bytes.append(data) } }
    var data: Data { lock.withLock { bytes } }
}
