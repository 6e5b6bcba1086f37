import Foundation
import SwiftProtobuf

/// Walks a decoded message and counts the numbers it stores: Core ML `WeightParams` (floats, halves and raw
/// bytes), repeated float and double fields (GLM and SVM coefficients, tree thresholds), and the class labels
/// of a classifier (`StringVector`/`Int64Vector` at fields 100 and 101 of the model type, as every Core ML
/// classifier numbers them).
struct ParameterCounter: Visitor {
    /// Elements counted.
    var elements: UInt64 = 0
    /// Bytes of weight data counted.
    var bytes: UInt64 = 0
    /// Class labels found at the top of the walked message.
    var classLabels: [String]?
    /// The number of labels, which may exceed those kept.
    var classLabelCount = 0
    let maximumLabels: Int
    private var depth = 0

    init(maximumLabels: Int) { self.maximumLabels = maximumLabels }

    /// Counts what `message` holds.
    static func count(_ message: some Message, maximumLabels: Int) throws -> ParameterCounter {
        var counter = ParameterCounter(maximumLabels: maximumLabels)
        try message.traverse(visitor: &counter)
        return counter
    }

    mutating func visitSingularMessageField<M: Message>(value: M, fieldNumber: Int) throws {
        if let weights = value as? CoreML_Specification_WeightParams {
            let halves = UInt64(weights.float16Value.count / 2)
            elements = elements.addingSaturated(UInt64(weights.floatValue.count) + halves + UInt64(weights.int8RawValue.count))
            bytes = bytes.addingSaturated(UInt64(weights.floatValue.count) * 4 + UInt64(weights.float16Value.count)
                + UInt64(weights.rawValue.count) + UInt64(weights.int8RawValue.count))
            return
        }
        if depth == 0, fieldNumber == 100 || fieldNumber == 101 {
            if let labels = value as? CoreML_Specification_StringVector {
                classLabelCount = labels.vector.count
                classLabels = Array(labels.vector.prefix(maximumLabels))
                return
            }
            if let labels = value as? CoreML_Specification_Int64Vector {
                classLabelCount = labels.vector.count
                classLabels = labels.vector.prefix(maximumLabels).map(String.init)
                return
            }
        }
        depth += 1
        defer { depth -= 1 }
        try value.traverse(visitor: &self)
    }

    mutating func visitRepeatedMessageField<M: Message>(value: [M], fieldNumber: Int) throws {
        for element in value { try visitSingularMessageField(value: element, fieldNumber: fieldNumber) }
    }

    mutating func visitRepeatedFloatField(value: [Float], fieldNumber: Int) throws { add(value.count, size: 4) }
    mutating func visitPackedFloatField(value: [Float], fieldNumber: Int) throws { add(value.count, size: 4) }
    mutating func visitRepeatedDoubleField(value: [Double], fieldNumber: Int) throws { add(value.count, size: 8) }
    mutating func visitPackedDoubleField(value: [Double], fieldNumber: Int) throws { add(value.count, size: 8) }

    private mutating func add(_ count: Int, size: UInt64) {
        elements = elements.addingSaturated(UInt64(count))
        bytes = bytes.addingSaturated(UInt64(count) * size)
    }

    mutating func visitMapField<KeyType, ValueType: MapValueType>(
        fieldType: _ProtobufMap<KeyType, ValueType>.Type, value: _ProtobufMap<KeyType, ValueType>.BaseType, fieldNumber: Int) throws {}

    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufEnumMap<KeyType, ValueType>.Type, value: _ProtobufEnumMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int) throws where ValueType.RawValue == Int {}

    mutating func visitMapField<KeyType, ValueType>(
        fieldType: _ProtobufMessageMap<KeyType, ValueType>.Type, value: _ProtobufMessageMap<KeyType, ValueType>.BaseType,
        fieldNumber: Int) throws {
        for element in value.values { try visitSingularMessageField(value: element, fieldNumber: fieldNumber) }
    }

    // Scalars carry no weights.
    mutating func visitSingularDoubleField(value: Double, fieldNumber: Int) throws {}
    mutating func visitSingularInt64Field(value: Int64, fieldNumber: Int) throws {}
    mutating func visitSingularUInt64Field(value: UInt64, fieldNumber: Int) throws {}
    mutating func visitSingularBoolField(value: Bool, fieldNumber: Int) throws {}
    mutating func visitSingularStringField(value: String, fieldNumber: Int) throws {}
    mutating func visitSingularBytesField(value: Data, fieldNumber: Int) throws {}
    mutating func visitSingularEnumField<E: Enum>(value: E, fieldNumber: Int) throws {}
    mutating func visitSingularGroupField<G: Message>(value: G, fieldNumber: Int) throws {}
    mutating func visitUnknown(bytes: Data) throws {}
}
