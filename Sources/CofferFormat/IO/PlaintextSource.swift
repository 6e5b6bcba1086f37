/// Plaintext that the sealer reads by offset, from several threads at once.
///
/// A regular file, a packed directory tree and an authenticated legacy file all present their
/// plaintext this way, so one parallel sealer serves them all.
public protocol PlaintextSource: Sendable {
    /// The exact number of plaintext bytes; known before sealing starts, as the header records it.
    var length: UInt64 { get }

    /// Fills `buffer` completely with the plaintext starting at `offset`.
    ///
    /// `offset + buffer.count` never exceeds `length`. Throws if the underlying data is shorter than
    /// promised (a file that shrank while it was being sealed).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws

    /// Offsets where a version 2 chunk must start whatever the content (a packed folder: every
    /// entry), so that a changed part does not shift its neighbours' chunks. Usually none.
    var segmentStarts: [UInt64] { get }
}

extension PlaintextSource {
    /// No boundaries beyond those the content decides.
    public var segmentStarts: [UInt64] { [] }
}
