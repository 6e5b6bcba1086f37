#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import CofferFormat
import Foundation

/// Assembles the rest of a delta update — every run of its ``DeltaPlan`` from the part file's
/// length on — with the copying, the downloading and the hashing side by side (docs/SDK.md,
/// "Delta updates").
///
/// Three things run at once. One thread copies the cached runs in order into the part file (one
/// copying thread: a second one writing the same file only waits on its lock). The caller
/// downloads the missing runs in order, each written at its own offsets (``RangeSink``). A second
/// thread hashes the new container in byte order: a cached run from the cached file (it need not
/// wait for the copy), a downloaded run from the part file once its bytes are there. So the
/// downloads no longer wait for the copies before them, and the hash waits only for downloads.
///
/// The part file is complete up to the lesser of the copy's and the downloads' ``Frontier``s; that
/// is what a follower is told (``PartWriter/reach(_:)``). A process killed meanwhile leaves holes,
/// which ``PartWriter`` finds on the next try: it resumes before the first one.
enum DeltaAssembly {
    /// How an assembly ended, when it did not throw.
    enum Outcome: Sendable, Equatable {
        /// Every byte of the plan is in the part file, and the part writer's hash covers it.
        case complete
        /// A cached file could not be read or a copy failed, the server ignored a Range, or the
        /// plan does not end at the model's size or names offsets no file can have: the rest is
        /// downloaded whole, from the part file's length (which has not moved; what the assembly
        /// wrote past it is written again).
        case fallBack
    }

    /// Why an assembly stopped early.
    enum Stop: Sendable {
        /// A cached container could not be read (removed, shorter than its header says, damaged),
        /// a copy or a read of the part file failed, or the server ignored a Range: the rest is
        /// downloaded whole (which meets a lasting write failure on its own).
        case fallBack
        /// A download failed, or the update was cancelled.
        case failed(SyncFailure)
    }

    /// Cached bytes are copied in blocks of this (4 MiB), each reported to the ``Frontier``.
    static let blockSize: UInt64 = 4 << 20
    /// The hash reads through a buffer of this size (1 MiB).
    static let bufferSize = 1 << 20

    /// Assembles `plan`'s runs from the part file's length to `size` into `writer`; `download`
    /// fetches one missing run into its sink (pieces, retries and redirects are the caller's).
    static func assemble(_ plan: DeltaPlan, size: UInt64, into writer: PartWriter,
                         download: (Range<UInt64>, RangeSink) async throws(SyncFailure) -> Void) async throws(SyncFailure) -> Outcome {
        let begun: (file: PositionalFile, start: UInt64, hash: SHA256)
        do {
            begun = try writer.beginAssembly()
        } catch {
            throw .cache("\(error)")
        }
        let runs = plan.runs(from: begun.start)
        // A header whose table runs past the end the manifest names is no plan to follow.
        guard let end = runs.last?.range.upperBound, end == size, runs.allSatisfy(\.isAddressable) else { return .fallBack }
        let frontier = Frontier(runs, end: end, reached: { writer.reach($0) })
        guard let work = Work(runs: runs, destination: begun.file, frontier: frontier, hash: begun.hash) else { return .fallBack }
        let group = DispatchGroup()
        onThread("coffer.delta-copy", group) { work.copyCachedRuns() }
        onThread("coffer.delta-hash", group) { work.hashInOrder() }
        for (index, run) in runs.enumerated() where run.source == .remote {
            guard !frontier.stopped else { break }
            do {
                try await download(run.range, RangeSink(run.range, of: begun.file, frontier: frontier))
            } catch {
                frontier.stop(PieceAnswer.isIgnoredRange(error) ? .fallBack : .failed(error))
                break
            }
            frontier.downloaded(to: Frontier.after(index, in: runs, remote: true, end: end))
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                group.notify(queue: .global()) { done.resume() }
            }
        } onCancel: {
            frontier.stop(.failed(.cancelled))
        }
        switch frontier.reason {
        case nil:
            writer.endAssembly(at: end, hash: work.hash)
            return .complete
        case .fallBack:
            // The whole download writes from `begun.start` again, over bytes a follower may have
            // been told of: it stops (``PartProgress``: bytes below its end never change).
            writer.abandonAssembly()
            return .fallBack
        case .failed(let failure):
            throw failure
        }
    }
}

extension DeltaAssembly {
    /// Runs `body` on a thread of its own within `group`. Not on Dispatch's global queues: the hash
    /// waits there for downloads whose callbacks may need those queues' few threads (URLSession on
    /// Linux), and on Linux a blocked worker is noticed only late.
    private static func onThread(_ name: String, _ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.start()
    }
}

extension DeltaPlan.Run {
    /// Whether every byte of the run lies at an offset a file can have, in the cached file too
    /// (offsets come from headers; past `Int64.max` a system call's offset cannot hold them).
    var isAddressable: Bool {
        guard range.upperBound <= UInt64(Int64.max) else { return false }
        guard case .local(_, let offset) = source else { return true }
        let (last, overflow) = offset.addingReportingOverflow(range.upperBound - range.lowerBound)
        return !overflow && last <= UInt64(Int64.max)
    }
}
