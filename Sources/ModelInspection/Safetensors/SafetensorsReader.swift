import Foundation

/// Reads a safetensors file's header: an 8-byte little-endian length, then that many bytes of JSON naming
/// each tensor's dtype, shape and byte range. Tensor data is never read.
enum SafetensorsReader {
    static let format = "safetensors"

    /// Bytes per element of the dtypes the format defines (sub-byte types count as one byte per two elements).
    static let elementBits: [String: UInt64] = [
        "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16,
        "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64, "F4": 4, "F6_E2M3": 6,
        "F6_E3M2": 6, "C64": 64,
    ]

    /// Whether `prefix` (the first bytes of a file) looks like a safetensors header.
    static func matches(_ prefix: Data) -> Bool {
        guard prefix.count >= 9 else { return false }
        let start = prefix.startIndex
        return prefix[start + 8] == UInt8(ascii: "{") && prefix[start..<start + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >= 2
    }

    static func read(_ source: any ByteSource, limits: InspectionLimits) throws -> SafetensorsFacts {
        var cursor = ByteCursor(source, format: format)
        let headerLength = try cursor.integer(UInt64.self, "the header length")
        guard headerLength <= cursor.remaining else {
            throw InspectionError.malformed(format: format, reason: "header length \(headerLength) is past the end of the \(source.count)-byte file")
        }
        guard headerLength <= limits.maximumHeaderBytes else {
            throw InspectionError.tooLarge(format: format, what: "the JSON header", size: headerLength, limit: limits.maximumHeaderBytes)
        }
        let header = try cursor.bytes(Int(headerLength), "the JSON header")
        let dataBytes = source.count - 8 - headerLength
        guard let object = try? JSONSerialization.jsonObject(with: header), let entries = object as? [String: Any] else {
            throw InspectionError.malformed(format: format, reason: "the header is not a JSON object")
        }
        var metadata: [String: String] = [:]
        var tensors: [TensorSummary] = []
        var dataTypeCounts: [String: Int] = [:]
        var parameters: UInt64 = 0
        var weightBytes: UInt64 = 0
        for (name, value) in entries {
            if name == "__metadata__" {
                guard let map = value as? [String: Any] else {
                    throw InspectionError.malformed(format: format, reason: "__metadata__ is not an object")
                }
                for (key, value) in map { metadata[key] = value as? String ?? "\(value)" }
                continue
            }
            let tensor = try tensorSummary(name: name, value, dataBytes: dataBytes)
            dataTypeCounts[tensor.dataType, default: 0] += 1
            parameters = parameters.addingSaturated(tensor.elementCount)
            weightBytes = weightBytes.addingSaturated(tensor.byteCount ?? 0)
            tensors.append(tensor)
        }
        tensors.sort { $0.name < $1.name }
        let count = tensors.count
        return SafetensorsFacts(
            headerBytes: headerLength, metadata: metadata, tensors: Array(tensors.prefix(limits.maximumListedTensors)),
            tensorCount: count, dataTypeCounts: dataTypeCounts, parameterCount: parameters, weightBytes: weightBytes)
    }

    private static func tensorSummary(name: String, _ value: Any, dataBytes: UInt64) throws -> TensorSummary {
        guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
              let shapeValues = entry["shape"] as? [Any], let offsets = entry["data_offsets"] as? [Any], offsets.count == 2
        else {
            throw InspectionError.malformed(format: format, reason: "tensor \"\(name)\" lacks dtype, shape or data_offsets")
        }
        let shape = try shapeValues.map { try unsigned($0, "a dimension of \"\(name)\"") }
        let begin = try unsigned(offsets[0], "the start of \"\(name)\"")
        let end = try unsigned(offsets[1], "the end of \"\(name)\"")
        guard begin <= end, end <= dataBytes else {
            throw InspectionError.malformed(format: format, reason: "tensor \"\(name)\" lies at bytes \(begin)..<\(end), outside the \(dataBytes) data bytes")
        }
        let summary = TensorSummary(name: name, dataType: dtype, shape: shape, byteCount: end - begin)
        if let bits = elementBits[dtype] {
            let (bitCount, overflow) = summary.elementCount.multipliedReportingOverflow(by: bits)
            guard !overflow, bitCount / 8 + (bitCount % 8 == 0 ? 0 : 1) == end - begin else {  // (bits + 7) / 8 could overflow
                throw InspectionError.malformed(format: format, reason: "tensor \"\(name)\" (\(dtype) \(shape)) does not fill its \(end - begin) bytes")
            }
        }
        return summary
    }

    private static func unsigned(_ value: Any, _ what: String) throws -> UInt64 {
        if let integer = value as? Int, integer >= 0 { return UInt64(integer) }
        if let integer = value as? UInt64 { return integer }
        if let double = value as? Double, double >= 0, double < 1.8e19, double.rounded() == double { return UInt64(double) }
        throw InspectionError.malformed(format: format, reason: "\(what) is not a whole number ≥ 0")
    }
}
