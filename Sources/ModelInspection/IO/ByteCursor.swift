import Foundation

/// Reads little-endian numbers and length-prefixed strings in order from a ``ByteSource``, through a
/// window of at most ``windowSize`` bytes, so walking a header costs no more memory than the window.
package struct ByteCursor {
    /// How many bytes one refill reads.
    static let windowSize = 1 << 20

    let source: any ByteSource
    let format: String
    /// The offset of the next byte to read.
    private(set) var offset: UInt64
    private var window = Data()
    private var windowStart: UInt64 = 0

    /// A cursor at `offset` of `source`; errors name `format`.
    package init(_ source: any ByteSource, format: String, offset: UInt64 = 0) {
        self.source = source
        self.format = format
        self.offset = offset
    }

    /// Bytes left after the cursor.
    var remaining: UInt64 { source.count - min(offset, source.count) }

    /// The next `count` bytes; a clear error when the file ends first.
    mutating func bytes(_ count: Int, _ what: @autoclosure () -> String) throws -> Data {
        guard count >= 0, UInt64(count) <= remaining else {
            throw InspectionError.malformed(format: format, reason: "file ends inside \(what()) at byte \(offset)")
        }
        let windowEnd = windowStart + UInt64(window.count)
        if offset >= windowStart, offset + UInt64(count) <= windowEnd {
            let start = window.startIndex + Int(offset - windowStart)
            offset += UInt64(count)
            return Data(window[start..<start + count])
        }
        if count > Self.windowSize {
            let data = try source.read(at: offset, length: count)
            offset += UInt64(count)
            return data
        }
        windowStart = offset
        window = try source.read(at: offset, length: Int(min(UInt64(Self.windowSize), remaining)))
        let start = window.startIndex
        offset += UInt64(count)
        return Data(window[start..<start + count])
    }

    /// The next byte.
    mutating func byte(_ what: @autoclosure () -> String) throws -> UInt8 {
        if offset >= windowStart, offset < windowStart + UInt64(window.count) {
            let value = window[window.startIndex + Int(offset - windowStart)]
            offset += 1
            return value
        }
        return try bytes(1, what())[0]
    }

    /// Moves past `count` bytes without reading them.
    mutating func skip(_ count: UInt64, _ what: @autoclosure () -> String) throws {
        guard count <= remaining else {
            throw InspectionError.malformed(format: format, reason: "file ends inside \(what()) at byte \(offset)")
        }
        offset += count
    }

    /// A little-endian unsigned integer of `T`'s width.
    mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type, _ what: @autoclosure () -> String) throws -> T {
        let data = try bytes(MemoryLayout<T>.size, what())
        return data.reversed().reduce(T(0)) { $0 << 8 | T($1) }
    }
}
