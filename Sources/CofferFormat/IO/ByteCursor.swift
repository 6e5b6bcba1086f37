/// Big-endian reading over bytes that came from outside; every read is bounds-checked first.
package struct ByteCursor {
    private let bytes: [UInt8]
    /// The offset of the next unread byte.
    package private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Bytes not read yet.
    package var remaining: Int { bytes.count - offset }

    /// Reads `count` bytes, or throws `failure` when fewer remain.
    package mutating func take(_ count: Int, or failure: @autoclosure () -> Error) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw failure() }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Reads a big-endian unsigned integer.
    package mutating func integer<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, or failure: @autoclosure () -> Error
    ) throws -> T {
        try take(MemoryLayout<T>.size, or: failure()).reduce(T.zero) { $0 << 8 | T($1) }
    }
}

/// Big-endian writing into a growing byte array.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func append<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append<S: Sequence>(contentsOf other: S) where S.Element == UInt8 {
        bytes.append(contentsOf: other)
    }

    /// Returns what was written and starts over, keeping the capacity.
    package mutating func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }
}
