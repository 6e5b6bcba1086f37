import CofferFormat
import Foundation

/// Decrypts one model while its update downloads it, so that opening it does not read the file a
/// second time (``CofferClient/beginAccessing(identifier:opening:progress:)``).
///
/// It reads the part file as the download writes it (``GrowingPartSource``): the header first,
/// then the model key (from the key store, or fetched while the download goes on), then every
/// chunk, each authenticated before its plaintext goes to the sink. The result counts only when
/// the download's SHA-256 matched the signed manifest, every chunk was decrypted, and the download
/// never started its file again (``PartProgress/rewind()``); until then the sink's bytes are
/// the follower's alone, and otherwise they are dropped and the model is opened from the cache.
final class ModelFollower: @unchecked Sendable {
    /// The model's name in the manifest.
    let modelName: String
    /// The sealed model's SHA-256 once the update starts following it.
    var sha256: String? { lock.withLock { followed } }
    private var followed: String?
    /// Where the download's bytes reach.
    let progress = PartProgress()
    private let keys: ModelKeys
    private let makeSink: @Sendable (_ plaintextLength: UInt64, _ isFolder: Bool) throws -> (any RandomAccessSink)?
    private var task: Task<Bool, Never>?
    private var verified = false
    private var madeSink: (any RandomAccessSink)?
    private let lock = NSLock()

    /// `makeSink` is asked once the header is known; nil declines (the model is then opened from the cache).
    init(modelName: String, keys: ModelKeys,
         makeSink: @escaping @Sendable (_ plaintextLength: UInt64, _ isFolder: Bool) throws -> (any RandomAccessSink)?) {
        self.modelName = modelName
        self.keys = keys
        self.makeSink = makeSink
    }

    /// Starts following the download of `entry` into `partPath`; at most once.
    func start(_ entry: Manifest.Entry, partPath: String) {
        lock.withLock {
            guard task == nil else { return }
            followed = entry.sha256
            let size = UInt64(max(entry.size, 0))
            let keyID = entry.keyID
            task = Task { await self.follow(partPath: partPath, size: size, keyID: keyID) }
        }
    }

    /// The download has the size and SHA-256 the signed manifest names, and was committed to the cache.
    func markVerified() { lock.withLock { verified = true } }

    /// No more bytes come; waits for the decryption. The sink, when the whole model was decrypted
    /// into it, the download was verified (``markVerified()``), and the download did not start its
    /// file again since the follower began; nil otherwise (drop whatever the sink holds).
    func finish() async -> (any RandomAccessSink)? {
        progress.close()
        guard let task = lock.withLock({ self.task }) else { return nil }
        let decrypted = await task.value
        return lock.withLock { decrypted && verified && !progress.wasRewound ? madeSink : nil }
    }

    private func follow(partPath: String, size: UInt64, keyID: String) async -> Bool {
        do {
            let progress = self.progress
            // The part file exists once its first bytes are on disk.
            let source = try await Self.onOwnThread { () throws -> GrowingPartSource in
                try progress.wait(until: 1)
                return GrowingPartSource(file: try PositionalFile(readingAt: partPath), progress: progress, length: size)
            }
            guard let header = try await Self.onOwnThread({ try Self.header(of: source) }) else { return false }
            // Not verified yet: a kept key that does not open it stays kept (the cache's copy, once
            // its SHA-256 matched, is opened with its own checks).
            let key = try await keys.key(keyID, for: modelName, opening: header, verifiedHeader: { false })
            // The reader checks the header's MAC with the key and its length against the manifest's
            // size before the sink is made: a forged header cannot make it large.
            let reader = try SealedModel.Reader(source, using: .modelKey(key), checkingLastChunk: false)
            guard let sink = try makeSink(reader.plaintextLength, reader.header.payloadKind == .directory) else { return false }
            lock.withLock { madeSink = sink }
            try await Self.onOwnThread {
                // One worker, on this thread: the chunks arrive in order, and AES-GCM on one core
                // outruns the download.
                try reader.decrypt(to: sink, workers: 1)
            }
            return true
        } catch {
            // Whatever stopped it (the download failed or started again, a refused key, a chunk
            // that did not authenticate), the cache's copy is opened instead, with its own errors.
            return false
        }
    }

    /// The container's header, read before anything is verified: nil for one longer than a delta
    /// would read (``DeltaState/maximumHeaderLength``), whose length is only the sender's word.
    static func header(of source: some PlaintextSource) throws -> ContainerHeader? {
        var prefix = [UInt8](repeating: 0, count: Int(min(UInt64(ContainerHeader.maximumLength), source.length)))
        try prefix.withUnsafeMutableBytes { try source.read(into: $0, at: 0) }
        guard let preamble = try ContainerHeader.preamble(from: prefix),
              preamble.headerLength <= DeltaState.maximumHeaderLength else { return nil }
        return try SealedModel.readHeader(from: source)
    }

    /// Runs `body`, which waits on the download, on a thread of its own: not on the Swift pool nor
    /// on Dispatch's global queues, whose few threads the download itself needs (URLSession's
    /// queues on Linux, a delta's ``DeltaAssembly``); a thread blocked there could stall it.
    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "coffer.model-follower"
            thread.start()
        }
    }
}
