import Foundation

extension SealedModel {
    /// Seals `source` as a container written to `sink` from offset 0; returns the header.
    ///
    /// Chunks are sealed in parallel and written at their final offsets, so the sink must accept
    /// writes in any order (a file or a preallocated buffer).
    @discardableResult
    public static func seal(
        _ source: some PlaintextSource,
        kind: ContainerHeader.PayloadKind,
        name: String,
        using key: KeyMaterial,
        to sink: some RandomAccessSink,
        options: Options = Options(),
        progress: Progress? = nil
    ) throws -> ContainerHeader {
        let (header, keys) = try draftHeader(kind: kind, name: name, source: source, key: key, options: options)
        return try write(source, as: header, keys: keys, to: sink, workers: options.workers, progress: progress)
    }

    /// Seals bytes held in memory into a container held in memory.
    public static func seal(
        _ bytes: [UInt8], name: String, using key: KeyMaterial, options: Options = Options()
    ) throws -> [UInt8] {
        let source = BytesSource(bytes)
        let (header, keys) = try draftHeader(kind: .file, name: name, source: source, key: key, options: options)
        let sink = MemorySink(length: Int(header.sealedLength))
        try write(source, as: header, keys: keys, to: sink, workers: options.workers, progress: nil)
        return sink.bytes
    }

    /// Writes the header, then every chunk sealed in parallel at its final offset (version 2: the
    /// chunks first, then the header they complete); returns the header written.
    @discardableResult
    private static func write(
        _ source: some PlaintextSource, as header: ContainerHeader, keys: FileKeys, to sink: some RandomAccessSink,
        workers: Int, progress: Progress?
    ) throws -> ContainerHeader {
        if header.version >= 2 {
            return try writeDeterministic(source, as: header, keys: keys, to: sink, workers: workers, progress: progress)
        }
        let cipher = ChunkCipher(keys: keys, header: header)
        try header.encoded().withUnsafeBytes { try sink.write($0, at: 0) }
        let layout = header.layout
        let lastIndex = layout.chunkCount - 1
        try ChunkWorkers.forEach(chunkCount: layout.chunkCount, workers: workers, bufferSize: header.chunkSize) {
            buffer, index in
            let range = layout.plaintextRange(ofChunk: index)
            let plaintext = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(range.count)])
            try source.read(into: plaintext, at: range.lowerBound)
            let sealed = try cipher.seal(UnsafeRawBufferPointer(plaintext), index: index, isLast: index == lastIndex)
            try sealed.withUnsafeBytes { try sink.write($0, at: layout.sealedOffset(ofChunk: index)) }
            progress?(UInt64(range.count))
        }
        return header
    }

    /// Version 2: every chunk in parallel, each read once, its ID computed and the chunk sealed
    /// under it at its final offset (the draft's lengths fix every offset); then the header,
    /// completed with the IDs, at offset 0.
    private static func writeDeterministic(
        _ source: some PlaintextSource, as draft: ContainerHeader, keys: FileKeys, to sink: some RandomAccessSink,
        workers: Int, progress: Progress?
    ) throws -> ContainerHeader {
        let layout = draft.layout
        let ids = Slots(count: Int(layout.chunkCount), initial: ChunkID.zero)
        try ChunkWorkers.forEach(chunkCount: layout.chunkCount, workers: workers, bufferSize: max(1, draft.largestChunkLength)) {
            buffer, index in
            let range = layout.plaintextRange(ofChunk: index)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(range.count)])
            try source.read(into: chunk, at: range.lowerBound)
            let plaintext = UnsafeRawBufferPointer(chunk)
            let id = keys.chunkID(of: plaintext)
            let sealed = try ChunkCipher.seal(plaintext, id: id, using: keys.payloadKey)
            try sealed.withUnsafeBytes { try sink.write($0, at: layout.sealedOffset(ofChunk: index)) }
            ids.store(id, at: Int(index))
            progress?(UInt64(range.count))
        }
        let header = completed(draft, ids: ids.take(), keys: keys)
        try header.encoded().withUnsafeBytes { try sink.write($0, at: 0) }
        return header
    }

    /// Seals the file or folder at `path` into a new container at `destination`.
    ///
    /// The container is built beside `destination` and renamed into place only when complete, so a
    /// failure or interruption leaves nothing behind. An existing `destination` is refused unless
    /// `replacing` is true.
    @discardableResult
    public static func seal(
        contentsOf path: String,
        to destination: String,
        using key: KeyMaterial,
        replacing: Bool = false,
        options: Options = Options(),
        progress: Progress? = nil
    ) throws -> ContainerHeader {
        try seal(Input(path: path), to: destination, using: key, replacing: replacing, options: options, progress: progress)
    }

    /// Seals an input already opened with ``Input/init(path:)`` (so its length is known for a progress
    /// display) into a new container at `destination`, atomically as ``seal(contentsOf:to:using:replacing:options:progress:)``.
    @discardableResult
    public static func seal(
        _ input: Input,
        to destination: String,
        using key: KeyMaterial,
        replacing: Bool = false,
        options: Options = Options(),
        progress: Progress? = nil
    ) throws -> ContainerHeader {
        let output = try AtomicOutput(finalPath: destination, replacing: replacing)
        do {
            let file = try output.createFile(mode: 0o644)
            let header = try seal(
                input.source, kind: input.kind, name: input.name, using: key, to: file, options: options,
                progress: progress)
            try file.synchronize()
            try output.commit()
            return header
        } catch {
            output.discard()
            throw error
        }
    }

    /// The plaintext at a path: a regular file as it is, a folder packed (docs/FORMAT.md, "Packed tree").
    public struct Input: Sendable {
        /// The plaintext, read by offset.
        public let source: any PlaintextSource
        /// Whether it is one file or a packed folder.
        public let kind: ContainerHeader.PayloadKind
        /// The file or folder name recorded in the header.
        public let name: String

        /// Opens the file, or walks the folder, at `path` (following a link at `path` itself only).
        ///
        /// Throws `IOFailure` when nothing is there, and `PackingError` for anything but a regular
        /// file or a folder (a pipe, a device), whose length could not be known up front.
        public init(path: String) throws {
            var info = stat()
            guard stat(path, &info) == 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
            name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                source = try PackedTree(root: path)
                kind = .directory
            case S_IFREG:
                source = try FileSource(path: path)
                kind = .file
            default:
                throw PackingError(path: path, reason: "not a regular file or a folder")
            }
        }
    }
}
