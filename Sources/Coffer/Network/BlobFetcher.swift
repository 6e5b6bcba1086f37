import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads one sealed model into a part file, resuming where an earlier try stopped.
///
/// The file is asked for in Range pieces of at most ``pieceSize`` bytes, so memory stays bounded
/// whatever the model's size (URLSession has no back-pressure on Linux). Bytes already in the part
/// file are hashed first; every byte is hashed as it is written; the result must have the size
/// and SHA-256 the signed manifest names, or the part file is removed and the model refused.
struct BlobFetcher: Sendable {
    /// 64 MiB; debug builds take `COFFER_TEST_PIECE_BYTES` instead, so the crash tests can stop
    /// between pieces of small models.
    static let pieceSize: UInt64 = {
        #if DEBUG
        if let value = ProcessInfo.processInfo.environment["COFFER_TEST_PIECE_BYTES"].flatMap(UInt64.init), value > 0 { return value }
        #endif
        return 64 << 20
    }()

    let api: DeviceAPI
    let retry: RetryPolicy

    /// How many bytes of a new container are fetched first to learn its header (a version 2
    /// header with a table of up to ~1,800 chunks fits; a longer one is completed next).
    static let headerProbe: UInt64 = 64 << 10

    /// Fetches `entry` (called `name` in the manifest) from `url` into `partPath`.
    ///
    /// With `cachedModels` (containers this cache holds), a version 2 container is assembled as a
    /// delta: its header first, then each chunk copied from a cached container sealed with the
    /// same key, or downloaded with one Range request per run of missing chunks. `skipped` hears
    /// the bytes that will be copied instead of downloaded, `moreToTravel` the bytes that travel
    /// after all: when an assembly falls back to the whole download, the bytes it would have
    /// copied and those its downloads had already brought; when the model is fetched once more,
    /// all of it. So `progress`, which hears every byte that arrives, ends at the total. If the
    /// result does not have the manifest's SHA-256 and came from a delta (a damaged cached file) or from a part file an
    /// earlier try left, the model is downloaded whole once more (`fetchingAgain`); otherwise it is
    /// refused. `following` hears how far the part file's bytes reach, for a reader that decrypts it as it
    /// grows (``ModelFollower``); it is told when the file starts again.
    func fetch(_ name: String, _ entry: Manifest.Entry, from url: URL, into partPath: String, cachedModels: [String] = [],
               following: PartProgress? = nil, fetchingAgain: Bool = false,
               skipped: @escaping @Sendable (UInt64) -> Void = { _ in },
               moreToTravel: @escaping @Sendable (UInt64) -> Void = { _ in },
               progress: @escaping @Sendable (UInt64) -> Void) async throws(SyncFailure) {
        let size = UInt64(entry.size)
        let writer: PartWriter
        do {
            writer = try PartWriter(path: partPath, expectedSize: size)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .cache("cannot write \(partPath): \(error)")
        }
        if let following { writer.attach(following) }
        progress(writer.offset)
        // Bytes an earlier try left: trusted up to the first hole, which a try killed in the middle
        // of a piece may not leave (its last page half written beside a copied run).
        let resumed = writer.offset > 0
        var delta = cachedModels.isEmpty ? DeltaState.whole : DeltaState.learningHeader
        if case .whole = delta, let background = api.pieceTransport as? BackgroundTransport {
            // Every piece goes to the system at once, so the model moves while the app is suspended.
            await background.prefetch(Self.pieces(from: writer.offset, size: size).map { pieceRequest(url, $0) }, total: size)
        }
        var failures = 0
        // How far the file ever reached: a try that started it again is progress only past it.
        var furthest = writer.offset
        while writer.offset < size {
            let start = writer.offset
            let next = delta.next(at: start, size: size, keyID: entry.keyID, writer: writer, cachedModels: cachedModels, skipped: skipped)
            delta = next.state
            if case .assemble(let plan) = next.step {
                let downloaded = ByteTally()
                let outcome = try await DeltaAssembly.assemble(plan, size: size, into: writer) { (range, sink) throws(SyncFailure) in
                    try await download(range, of: url, into: sink, total: size) { count in
                        downloaded.add(count)
                        progress(count)
                    }
                }
                if outcome == .fallBack {
                    delta = .whole
                    // The rest travels whole: what the plan would have copied, and again what it downloaded.
                    moreToTravel(plan.localBytes(from: start).addingSaturated(downloaded.total))
                }
                continue
            }
            guard case .download(let end) = next.step else { continue }
            let restarts = writer.restartCount
            do {
                // Only whole pieces go to a background session; a delta's header and chunk runs
                // are small and asked once, so they keep the foreground transport.
                let transport = if case .whole = delta { api.pieceTransport } else { api.transport }
                try await piece(url, from: start, through: min(end, Self.pieceEnd(after: start, size: size)) - 1, total: size,
                                into: writer, through: transport)
                CrashPoint.reach("piece-written")
                progress(writer.offset.subtractingSaturated(start))
                failures = 0
            } catch let failure {
                // A server that ignored Range starts the file again, so the offset may now be
                // below where this piece began. Such a try is progress only when it passed the
                // furthest the file reached by a piece or more: a server that answers every try
                // with a 200 cut one byte past the last would otherwise have the file rewritten
                // from byte 0 for ever.
                progress(writer.offset.subtractingSaturated(start))
                let restarted = writer.restartCount != restarts
                let progressed = writer.offset > start && (!restarted || writer.offset >= furthest.addingSaturated(Self.pieceSize))
                furthest = max(furthest, writer.offset)
                try await backOff(after: failure, failures: &failures, progressed: progressed)
            }
        }
        let digest = writer.finish()
        guard digest == entry.sha256 else {
            writer.discard()
            if delta.isPlanned || resumed, !fetchingAgain {
                // Copied bytes, or bytes an earlier try left, that were not what they should be:
                // fetch the whole model once more, from nothing (once: should the part file
                // survive its removal, the next try would find it again).
                moreToTravel(size)
                return try await fetch(name, entry, from: url, into: partPath, fetchingAgain: true, progress: progress)
            }
            throw .modelRefused(name: name, reason: "its SHA-256 is \(digest), not \(entry.sha256) as the manifest says")
        }
        do {
            try writer.synchronize()
        } catch {
            throw .cache("cannot write \(partPath): \(error)")
        }
    }

    /// Downloads bytes `range` of `url` (one missing run of a delta update) into `sink`, in pieces
    /// on the fixed boundaries, trying a transient failure again from where it stopped.
    private func download(_ range: Range<UInt64>, of url: URL, into sink: RangeSink, total: UInt64,
                          progress: @Sendable (UInt64) -> Void) async throws(SyncFailure) {
        var failures = 0
        while sink.offset < range.upperBound {
            let start = sink.offset
            do {
                try await piece(url, from: start, through: min(range.upperBound, Self.pieceEnd(after: start, size: total)) - 1,
                                total: total, into: sink, through: api.transport)
                CrashPoint.reach("piece-written")
                progress(sink.offset - start)
                failures = 0
            } catch let failure {
                progress(sink.offset - start)
                try await backOff(after: failure, failures: &failures, progressed: sink.offset > start)
            }
        }
    }

    /// After a failed piece: throws `failure` unless it is transient (only a server's can be) and
    /// tries are left, else waits before the next try. A piece that got bytes starts the count again.
    private func backOff(after failure: SyncFailure, failures: inout Int, progressed: Bool) async throws(SyncFailure) {
        if progressed { failures = 0 }
        failures += 1
        guard failure.isTransient, failures < retry.attempts else { throw failure }
        do {
            try await Task.sleep(nanoseconds: UInt64(retry.delay(before: failures + 1) * 1e9))
        } catch {
            throw .cancelled
        }
    }

    /// Where the piece that starts at `start` ends (exclusive): at the next multiple of
    /// ``pieceSize``, or at `size`. Pieces sit on fixed boundaries, so a download resumed at any
    /// boundary asks for the same pieces a background session may already hold.
    static func pieceEnd(after start: UInt64, size: UInt64) -> UInt64 {
        let (boundary, overflow) = (start / pieceSize + 1).multipliedReportingOverflow(by: pieceSize)
        return overflow ? size : min(boundary, size)
    }

    /// The pieces from `offset` to `size`, each ``pieceEnd(after:size:)`` long.
    static func pieces(from offset: UInt64, size: UInt64) -> [ClosedRange<UInt64>] {
        var pieces: [ClosedRange<UInt64>] = []
        var start = offset
        while start < size {
            let end = pieceEnd(after: start, size: size)
            pieces.append(start...(end - 1))
            start = end
        }
        return pieces
    }

    /// The request for bytes `range` of `url`; the same for a piece whenever it is asked.
    private func pieceRequest(_ url: URL, _ range: ClosedRange<UInt64>) -> URLRequest {
        var request = URLRequest(url: url)
        request.timeoutInterval = api.configuration.requestTimeout
        request.setValue("bytes=\(range.lowerBound)-\(range.upperBound)", forHTTPHeaderField: "Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        return request
    }

    /// Asks for bytes `first...last` and writes them at their offsets, following a redirect to
    /// where the blob is stored (``BlobRedirect``); each piece asks `url` again.
    private func piece(_ url: URL, from first: UInt64, through last: UInt64, total: UInt64, into sink: any PieceSink,
                       through transport: any CofferTransport) async throws(SyncFailure) {
        let request = pieceRequest(url, first...last)
        let response: HTTPURLResponse
        sink.beginPiece()
        // Whatever arrived is on disk before the next try or the next run resumes from it.
        defer { try? sink.flush() }
        do {
            // A redirect (object storage, a CDN) is followed to where the same Range is asked
            // again, without credentials; the digest check below the loop holds whoever answers.
            response = try await BlobRedirect.stream(request, through: transport) { response, data in
                try sink.accept(data, response: response, first: first, last: last, total: total)
            }
        } catch let failure as PartWriter.Refusal {
            throw failure.failure
        } catch let refusal as BlobRedirect.Refusal {
            throw .server(.answer(status: refusal.status, code: "redirect_refused", reason: refusal.reason))
        } catch is CancellationError {
            throw .cancelled
        } catch let error as URLError where error.code == .cancelled && Task.isCancelled {
            throw .cancelled
        } catch {
            throw .server(DeviceAPI.networkFailure(error, url: request.url))
        }
        if response.statusCode != 206 {
            // An answer without a body never reached the sink's checks.
            do {
                try PieceAnswer.check(response, body: Data(), first: first, last: last, total: total, whole: sink.takesWholeAnswer)
            } catch {
                throw error.failure
            }
        }
        let expectedEnd = response.statusCode == 200 ? total : last + 1
        guard sink.offset == expectedEnd else {
            let start = response.statusCode == 200 ? 0 : first
            throw .server(.unreachable("the answer ended after \(sink.offset.subtractingSaturated(start)) of \(expectedEnd - start) bytes"))
        }
    }
}
