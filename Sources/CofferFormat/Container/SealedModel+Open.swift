import Foundation

extension SealedModel {
    /// Opens a container held in memory whose payload is one file.
    public static func open(_ bytes: [UInt8], using key: KeyMaterial) throws -> [UInt8] {
        let reader = try Reader(bytes: bytes, using: key)
        let sink = MemorySink(length: Int(reader.plaintextLength))
        try reader.decrypt(to: sink)
        return sink.bytes
    }

    /// Restores the file or folder sealed in the container at `path` to `destination`.
    ///
    /// The result is built beside `destination` and renamed into place only after every chunk
    /// authenticated (and, for a folder, the packed tree was valid), so a damaged container leaves
    /// nothing behind. An existing `destination` is refused unless `replacing` is true. Restored
    /// files are created 0600 (folders' files get their recorded modes). A header longer than
    /// `maximumHeaderLength` is refused before its chunk table is read (nil: no limit).
    @discardableResult
    public static func open(
        contentsOf path: String,
        to destination: String,
        using key: KeyMaterial,
        replacing: Bool = false,
        workers: Int = SealedModel.defaultWorkerCount,
        progress: Progress? = nil,
        maximumHeaderLength: Int? = nil
    ) throws -> ContainerHeader {
        let reader = try Reader(path: path, using: key, maximumHeaderLength: maximumHeaderLength)
        let output = try AtomicOutput(finalPath: destination, replacing: replacing)
        do {
            switch reader.header.payloadKind {
            case .file:
                let file = try output.createFile(mode: 0o600)
                try reader.decrypt(to: file, workers: workers, progress: progress)
                try file.synchronize()
            case .directory:
                let unpacker = try TreeUnpacker(destination: output.temporaryPath, expectedLength: reader.plaintextLength)
                try reader.decryptInOrder(workers: workers, progress: progress) { plaintext in
                    try plaintext.withUnsafeBytes { try unpacker.consume($0) }
                }
                try unpacker.finish()
            }
            try output.commit()
            return reader.header
        } catch {
            output.discard()
            throw error
        }
    }
}
