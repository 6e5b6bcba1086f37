extension PackedTree {
    /// Reads a big-endian unsigned integer from the start of `bytes` (the unpacker's field decoder;
    /// the packer writes with the shared `ByteWriter`).
    static func bigEndian<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.reduce(0) { ($0 << 8) | UInt64($1) }
    }
}
