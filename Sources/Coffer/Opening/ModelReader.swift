import CofferFormat
import Foundation

/// A sealed model opened with its key: decrypts whole or by range, authenticating every chunk
/// it touches. A chunk that fails authentication is an error, never data.
public final class ModelReader: Sendable {
    let sealed: SealedModel.Reader
    /// The cached file it reads, as found before it was opened (nil when unknown): a failure is
    /// checked against that file, not against whatever an update put in its place since.
    let identity: FileIdentity?

    init(_ sealed: SealedModel.Reader, identity: FileIdentity? = nil) {
        self.sealed = sealed
        self.identity = identity
    }

    /// The decrypted size in bytes.
    public var length: UInt64 { sealed.plaintextLength }

    /// Whether the model is a folder (read it with ``DecryptedFile`` through
    /// ``ModelCollection/Entry/withDecryptedFile(_:)``; its bytes here are a packed tree).
    public var isFolder: Bool { sealed.header.payloadKind == .directory }

    /// The decrypted bytes in `range` (clamped to the model).
    public func read(_ range: Range<UInt64>) throws -> Data {
        Data(try sealed.read(range: range.clamped(to: 0..<length)))
    }

    /// The whole model decrypted into memory (in parallel).
    public func data() throws -> Data {
        guard length <= UInt64(Int.max) else { throw CofferError.modelInvalid(name: sealed.header.originalName, reason: "too large for memory") }
        let sink = DataSink(count: Int(length))
        try sealed.decrypt(to: sink)
        return sink.take()
    }

    /// Decrypts the whole model into `sink` by offset, in parallel (a file, say).
    public func decrypt(to sink: some RandomAccessSink) throws {
        try sealed.decrypt(to: sink)
    }

    /// Hands the decrypted model to `consume` in order, a chunk at a time. Each chunk is
    /// authenticated before it is handed over, but a damaged chunk further on is found only when
    /// the stream reaches it, after the chunks before it were consumed: to hand on nothing of a
    /// damaged model, call ``ModelCollection/Entry/verify(_:)`` first.
    public func stream(_ consume: (Data) throws -> Void) throws {
        try sealed.decryptInOrder(consume)
    }
}

/// A buffer the decrypting workers fill by offset, handed out as `Data` without a copy.
final class DataSink: RandomAccessSink, @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    init(count: Int) {
        storage = .allocate(byteCount: max(count, 1), alignment: 16)
        self.count = count
    }

    let count: Int
    private var taken = false

    deinit { if !taken { storage.deallocate() } }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        guard offset + UInt64(bytes.count) <= UInt64(count) else { throw CofferError.modelInvalid(name: "", reason: "a chunk lies outside the model") }
        UnsafeMutableRawBufferPointer(rebasing: storage[Int(offset)...]).copyMemory(from: bytes)
    }

    /// The bytes; the sink must not be written afterwards.
    func take() -> Data {
        taken = true
        guard let base = storage.baseAddress else { return Data() }
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
