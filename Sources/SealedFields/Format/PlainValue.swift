import Foundation
import GRDB

/// The bytes that get sealed: a database value with its storage class, so that a sealed column gives
/// back exactly what GRDB would have stored in it (text, integer, real, blob or NULL).
///
/// Layout: one tag byte (0 NULL, 1 INTEGER, 2 REAL, 3 TEXT, 4 BLOB), then for INTEGER 8 bytes big-endian,
/// for REAL the IEEE 754 bit pattern as 8 bytes big-endian, for TEXT its UTF-8 bytes, for BLOB its bytes.
enum PlainValue {
    /// The tag of an INTEGER value.
    static let integerTag: UInt8 = 1
    /// The tag of a REAL value.
    static let realTag: UInt8 = 2
    /// The tag of a TEXT value.
    static let textTag: UInt8 = 3
    /// The tag of a BLOB value.
    static let blobTag: UInt8 = 4

    static func encode(_ value: DatabaseValue) -> [UInt8] {
        switch value.storage {
        case .null:
            return [0]
        case .int64(let int):
            return [integerTag] + bigEndianBytes(UInt64(bitPattern: int))
        case .double(let double):
            return [realTag] + bigEndianBytes(double.bitPattern)
        case .string(let string):
            var bytes = [UInt8]()
            bytes.reserveCapacity(string.utf8.count + 1)
            bytes.append(textTag)
            bytes.append(contentsOf: string.utf8)
            return bytes
        case .blob(let data):
            var bytes = [UInt8](repeating: blobTag, count: 1)
            bytes.append(contentsOf: data)
            return bytes
        }
    }

    /// Nil when the bytes are not a valid encoding (only possible after authentication with a bug elsewhere).
    static func decode(_ bytes: Data) -> DatabaseValue? {
        bytes.withUnsafeBytes { raw -> DatabaseValue? in
            guard let tag = raw.first else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[1...])
            switch tag {
            case 0 where body.isEmpty:
                return .null
            case integerTag where body.count == 8:
                return Int64(bitPattern: bigEndian(body)).databaseValue
            case realTag where body.count == 8:
                return Double(bitPattern: bigEndian(body)).databaseValue
            case textTag:
                return validUTF8(body)?.databaseValue
            case blobTag:
                return Data(body).databaseValue
            default:
                return nil
            }
        }
    }

    /// The string these bytes encode, or nil when they are not valid UTF-8 (a repaired string is not
    /// what was sealed).
    static func validUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        // ASCII is valid UTF-8; anything else may have been repaired: compare what was made with what was given.
        guard isASCII(bytes) || string.utf8.elementsEqual(bytes) else { return nil }
        return string
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    static func bigEndianBytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    static func bigEndian<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
