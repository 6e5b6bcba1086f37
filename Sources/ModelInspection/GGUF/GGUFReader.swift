import Foundation

/// Reads a GGUF file's header: version, metadata key-value pairs and tensor descriptions. Tensor data is
/// never read; every count and length is checked against the bytes left in the file before it is used.
enum GGUFReader {
    static let format = "GGUF"
    static let magic = Data("GGUF".utf8)
    /// Strings longer than this are summarised, not kept.
    static let longestKeptString = 4096
    /// Array elements shown before "…".
    static let arrayPreview = 8

    static func matches(_ prefix: Data) -> Bool { prefix.starts(with: magic) }

    static func read(_ source: any ByteSource, limits: InspectionLimits) throws -> GGUFFacts {
        var cursor = ByteCursor(source, format: format)
        guard try cursor.bytes(4, "the magic") == magic else {
            throw InspectionError.malformed(format: format, reason: "the file does not start with GGUF")
        }
        let version = try cursor.integer(UInt32.self, "the version")
        guard version == 2 || version == 3 else {
            throw InspectionError.malformed(format: format, reason: "version \(version) is not supported (2 and 3 are)")
        }
        let tensorCount = try cursor.integer(UInt64.self, "the tensor count")
        let keyCount = try cursor.integer(UInt64.self, "the metadata count")
        // The smallest key-value pair takes 13 bytes, the smallest tensor description 24.
        guard keyCount <= cursor.remaining / 13 else {
            throw InspectionError.malformed(format: format, reason: "\(keyCount) metadata entries cannot fit in \(cursor.remaining) bytes")
        }
        guard tensorCount <= cursor.remaining / 24 else {
            throw InspectionError.malformed(format: format, reason: "\(tensorCount) tensors cannot fit in \(cursor.remaining) bytes")
        }
        var metadata: [String: String] = [:]
        for index in 0..<keyCount {
            try checkHeaderLimit(cursor, limits)
            let key = try string(&cursor, "metadata key \(index)")
            let type = try cursor.integer(UInt32.self, "the type of \(key)")
            metadata[key] = try value(&cursor, type: type, key: key, depth: 0)
        }
        var tensors: [TensorSummary] = []
        var dataTypeCounts: [String: Int] = [:]
        var parameters: UInt64 = 0
        for index in 0..<tensorCount {
            try checkHeaderLimit(cursor, limits)
            let name = try string(&cursor, "tensor name \(index)")
            let dimensionCount = try cursor.integer(UInt32.self, "the dimensions of \(name)")
            guard dimensionCount <= 8 else {
                throw InspectionError.malformed(format: format, reason: "tensor \"\(name)\" has \(dimensionCount) dimensions (at most 8)")
            }
            var shape: [UInt64] = []
            for _ in 0..<dimensionCount { shape.append(try cursor.integer(UInt64.self, "a dimension of \(name)")) }
            let type = try cursor.integer(UInt32.self, "the type of \(name)")
            _ = try cursor.integer(UInt64.self, "the offset of \(name)")
            let summary = TensorSummary(name: name, dataType: typeName(type), shape: shape, byteCount: nil)
            dataTypeCounts[summary.dataType, default: 0] += 1
            parameters = parameters.addingSaturated(summary.elementCount)
            if tensors.count < limits.maximumListedTensors { tensors.append(summary) }
        }
        return GGUFFacts(
            version: version, architecture: metadata["general.architecture"].map(unquoted),
            name: metadata["general.name"].map(unquoted), metadata: metadata, tensorCount: tensorCount,
            tensors: tensors, dataTypeCounts: dataTypeCounts, parameterCount: parameters)
    }

    private static func checkHeaderLimit(_ cursor: ByteCursor, _ limits: InspectionLimits) throws {
        guard cursor.offset <= limits.maximumHeaderBytes else {
            throw InspectionError.tooLarge(format: format, what: "the header", size: cursor.offset, limit: limits.maximumHeaderBytes)
        }
    }

    private static func unquoted(_ text: String) -> String {
        text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : text
    }

    /// A length-prefixed string; lengths past the file's end are refused before anything is read.
    private static func string(_ cursor: inout ByteCursor, _ what: String) throws -> String {
        let length = try cursor.integer(UInt64.self, "the length of \(what)")
        guard length <= cursor.remaining else {
            throw InspectionError.malformed(format: format, reason: "\(what) is \(length) bytes long, past the end of the file")
        }
        guard length <= UInt64(longestKeptString) else {
            try cursor.skip(length, what)
            return "<\(length)-byte string>"
        }
        return String(decoding: try cursor.bytes(Int(length), what), as: UTF8.self)
    }

    /// Bytes taken by one value of a fixed-size type, or `nil` for strings and arrays.
    private static func fixedSize(_ type: UInt32) -> UInt64? {
        switch type {
        case 0, 1, 7: 1
        case 2, 3: 2
        case 4, 5, 6: 4
        case 10, 11, 12: 8
        default: nil
        }
    }

    private static let typeNames: [UInt32: String] = [
        0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32", 7: "bool",
        8: "string", 9: "array", 10: "uint64", 11: "int64", 12: "float64",
    ]

    /// One metadata value written for people (strings in quotes, arrays summarised).
    private static func value(_ cursor: inout ByteCursor, type: UInt32, key: String, depth: Int) throws -> String {
        let what = "the value of \(key)"
        if let size = fixedSize(type) {
            let raw = try cursor.bytes(Int(size), what)
            let bits = raw.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            switch type {
            case 0, 2, 4, 10: return String(bits)
            case 1: return String(Int8(truncatingIfNeeded: bits))
            case 3: return String(Int16(truncatingIfNeeded: bits))
            case 5: return String(Int32(truncatingIfNeeded: bits))
            case 11: return String(Int64(bitPattern: bits))
            case 6: return String(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
            case 12: return String(Double(bitPattern: bits))
            default: return bits == 0 ? "false" : "true"
            }
        }
        switch type {
        case 8:
            return "\"" + (try string(&cursor, what)) + "\""
        case 9:
            guard depth < 4 else { throw InspectionError.malformed(format: format, reason: "\(key) nests arrays too deeply") }
            let elementType = try cursor.integer(UInt32.self, "the element type of \(key)")
            let count = try cursor.integer(UInt64.self, "the length of \(key)")
            // Each element takes at least one byte (eight for a string's length): refuse counts that cannot fit.
            let smallest = fixedSize(elementType) ?? (elementType == 8 ? 8 : 12)
            guard count <= cursor.remaining / smallest else {
                throw InspectionError.malformed(format: format, reason: "\(key) claims \(count) elements, more than the file holds")
            }
            guard let elementName = typeNames[elementType] else {
                throw InspectionError.malformed(format: format, reason: "\(key) has elements of unknown type \(elementType)")
            }
            var preview: [String] = []
            if let size = fixedSize(elementType), count > UInt64(arrayPreview) {
                for _ in 0..<arrayPreview { preview.append(try value(&cursor, type: elementType, key: key, depth: depth + 1)) }
                try cursor.skip((count - UInt64(arrayPreview)) * size, what)
            } else {
                for index in 0..<count {
                    let element = try value(&cursor, type: elementType, key: key, depth: depth + 1)
                    if index < arrayPreview { preview.append(element) }
                }
            }
            let shown = preview.joined(separator: ", ") + (count > UInt64(arrayPreview) ? ", …" : "")
            return "[\(elementName) × \(count)] [\(shown)]"
        default:
            throw InspectionError.malformed(format: format, reason: "\(key) has unknown value type \(type)")
        }
    }

    /// ggml's names of its tensor types.
    static func typeName(_ type: UInt32) -> String {
        let names: [UInt32: String] = [
            0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1", 10: "Q2_K",
            11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K", 16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS",
            19: "IQ1_S", 20: "IQ4_NL", 21: "IQ3_S", 22: "IQ2_S", 23: "IQ4_XS", 24: "I8", 25: "I16", 26: "I32",
            27: "I64", 28: "F64", 29: "IQ1_M", 30: "BF16", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4",
        ]
        return names[type] ?? "type\(type)"
    }
}
