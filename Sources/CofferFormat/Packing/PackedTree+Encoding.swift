extension PackedTree {
    /// Appends big-endian integers and raw bytes; builds the pre-encoded headers of a packed stream.
    struct ByteWriter {
        /// The bytes written so far.
        var bytes: [UInt8] = []

        mutating func append(_ value: UInt8) { bytes.append(value) }
        mutating func append(_ value: UInt16) { appendBigEndian(UInt64(value), width: 2) }
        mutating func append(_ value: UInt32) { appendBigEndian(UInt64(value), width: 4) }
        mutating func append(_ value: UInt64) { appendBigEndian(value, width: 8) }
        mutating func append<Bytes: Sequence>(bytes more: Bytes) where Bytes.Element == UInt8 {
            bytes.append(contentsOf: more)
        }

        private mutating func appendBigEndian(_ value: UInt64, width: Int) {
            for index in stride(from: width - 1, through: 0, by: -1) {
                bytes.append(UInt8(truncatingIfNeeded: value >> (UInt64(index) * 8)))
            }
        }
    }

    /// Reads a big-endian unsigned integer from the start of `bytes`.
    static func bigEndian<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.reduce(0) { ($0 << 8) | UInt64($1) }
    }
}
