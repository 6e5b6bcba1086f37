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
        let (header, keys) = try makeHeader(kind: kind, name: name, length: source.length, key: key, options: options)
        try write(source, as: header, keys: keys, to: sink, workers: options.workers, progress: progress)
        return header
    }

    /// Seals bytes held in memory into a container held in memory.
    public static func seal(
        _ bytes: [UInt8], name: String, using key: KeyMaterial, options: Options = Options()
    ) throws -> [UInt8] {
        let source = BytesSource(bytes)
        let (header, keys) = try makeHeader(kind: .file, name: name, length: source.length, key: key, options: options)
        let sink = MemorySink(length: Int(header.sealedLength))
        try write(source, as: header, keys: keys, to: sink, workers: options.workers, progress: nil)
        return sink.bytes
    }

    /// Writes the header, then every chunk sealed in parallel at its final offset.
    private static func write(
        _ source: some PlaintextSource, as header: ContainerHeader, keys: FileKeys, to sink: some RandomAccessSink,
        workers: Int, progress: Progress?
    ) throws {
        let cipher = ChunkCipher(keys: keys, header: header)
        try header.encoded().withUnsafeBytes { try sink.write($0, at: 0) }
        let lastIndex = header.chunkCount - 1
        try ChunkWorkers.forEach(chunkCount: header.chunkCount, workers: workers, bufferSize: header.chunkSize) {
            buffer, index in
            let range = header.plaintextRange(ofChunk: index)
            let plaintext = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(range.count)])
            try source.read(into: plaintext, at: range.lowerBound)
            let sealed = try cipher.seal(UnsafeRawBufferPointer(plaintext), index: index, isLast: index == lastIndex)
            try sealed.withUnsafeBytes { try sink.write($0, at: header.sealedOffset(ofChunk: index)) }
            progress?(UInt64(range.count))
        }
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
        let input = try PlaintextInput(path: path)
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
}

/// The plaintext at a path: a regular file as it is, a folder packed (docs/FORMAT.md, "Packed tree").
struct PlaintextInput {
    let source: any PlaintextSource
    let kind: ContainerHeader.PayloadKind
    let name: String

    init(path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw IOFailure(operation: .open, path: path, errno: ENOENT)
        }
        name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        if isFolder.boolValue {
            source = try PackedTree(root: path)
            kind = .directory
        } else {
            source = try FileSource(path: path)
            kind = .file
        }
    }
}
