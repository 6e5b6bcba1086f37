import Foundation
import SwiftProtobuf

/// Reads an ONNX `ModelProto`: whole up to ``InspectionLimits/maximumMessageBytes``, or as a ``Skeleton``
/// without initializer data beyond that. External data files are never opened.
enum ONNXReader {
    static let format = "ONNX model"

    /// Rules for a large model: keep everything except initializer contents (counted by size).
    static let skeletonRule: MessageRule = {
        // TensorProto: dims 1, data_type 2, name 8, external_data 13, data_location 14.
        let initializer = MessageRule(fields: [1: .keep, 2: .keep, 8: .keep, 13: .keep, 14: .keep], otherwise: .drop)
        // GraphProto: initializer 5, sparse_initializer 15.
        let graph = MessageRule(fields: [5: .message(initializer), 15: .drop], otherwise: .keep)
        return MessageRule(fields: [7: .message(graph)], otherwise: .keep)
    }()

    static func read(_ source: any ByteSource, limits: InspectionLimits, notes: inout [String]) throws -> ONNXFacts {
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = 64
        var skipped: UInt64?
        let data: Data
        if source.count <= limits.maximumMessageBytes {
            data = try source.read(at: 0, length: Int(source.count))
        } else {
            let skeleton = try Skeleton.build(source, length: source.count, rule: skeletonRule, limits: limits, format: format)
            data = skeleton.bytes
            skipped = skeleton.droppedBytes
        }
        let model: Onnx_ModelProto
        do {
            model = try Onnx_ModelProto(serializedBytes: data, options: options)
        } catch {
            throw InspectionError.malformed(format: format, reason: "not a valid ModelProto (\(error))")
        }
        guard model.hasIrVersion || model.hasGraph else {
            throw InspectionError.malformed(format: format, reason: "no IR version and no graph")
        }
        var facts = ONNXFacts(model)
        if let skipped {
            facts.weightBytes = facts.weightBytes.addingSaturated(skipped)
            notes.append("the model is over \(ByteText.describe(limits.maximumMessageBytes)): initializer data and parts over "
                + "\(ByteText.describe(limits.maximumPartBytes)) were skipped and counted by size")
        }
        return facts
    }
}

extension ONNXFacts {
    /// The facts a decoded model holds.
    init(_ model: Onnx_ModelProto) {
        self.init()
        irVersion = model.irVersion
        for opset in model.opsetImport { opsets[opset.domain] = opset.version }
        producerName = model.producerName.nonEmpty
        producerVersion = model.producerVersion.nonEmpty
        domain = model.domain.nonEmpty
        modelVersion = model.hasModelVersion ? model.modelVersion : nil
        docString = model.docString.nonEmpty
        for entry in model.metadataProps { metadata[entry.key] = entry.value }
        functionCount = model.functions.count
        let graph = model.graph
        graphName = graph.name.nonEmpty
        let initializerNames = Set(graph.initializer.map(\.name))
        inputs = graph.input.filter { !initializerNames.contains($0.name) }.map(Self.feature)
        outputs = graph.output.map(Self.feature)
        for node in graph.node {
            let name = node.domain.isEmpty || node.domain == "ai.onnx" ? node.opType : node.domain + "." + node.opType
            operatorCounts[name, default: 0] += 1
        }
        initializerCount = graph.initializer.count + graph.sparseInitializer.count
        for tensor in graph.initializer {
            parameterCount = parameterCount.addingSaturated(
                tensor.dims.reduce(UInt64(1)) { $0.multipliedSaturated(by: UInt64(max($1, 0))) })
            if tensor.dataLocation == .external { externalInitializerCount += 1 }
            let inline = UInt64(tensor.rawData.count) + UInt64(tensor.floatData.count + tensor.int32Data.count) * 4
                + UInt64(tensor.int64Data.count + tensor.doubleData.count + tensor.uint64Data.count) * 8
                + tensor.stringData.reduce(UInt64(0)) { $0 + UInt64($1.count) }
            weightBytes = weightBytes.addingSaturated(inline)
        }
    }

    static func feature(_ value: Onnx_ValueInfoProto) -> Feature {
        let type = value.type
        var shape: [Int64]?
        var names: [String]?
        let text: String
        switch type.value {
        case .tensorType(let tensor):
            text = "tensor(\(dataTypeName(tensor.elemType)))"
            if tensor.hasShape {
                shape = tensor.shape.dim.map { if case .dimValue(let v)? = $0.value { v } else { -1 } }
                let symbolic = tensor.shape.dim.map { if case .dimParam(let p)? = $0.value { p } else { "" } }
                names = symbolic.contains { !$0.isEmpty } ? symbolic : nil
            }
        case .sequenceType: text = "sequence"
        case .mapType(let map): text = "map(\(dataTypeName(map.keyType)), …)"
        case .optionalType: text = "optional"
        case .sparseTensorType(let tensor): text = "sparse_tensor(\(dataTypeName(tensor.elemType)))"
        case .opaqueType: text = "opaque"
        case nil: text = "unspecified"
        }
        return Feature(name: value.name, type: text, shape: shape, dimensionNames: names,
                       isOptional: { if case .optionalType = type.value { true } else { false } }(),
                       description: value.docString.nonEmpty)
    }

    /// ONNX's names of `TensorProto.DataType` values.
    static func dataTypeName(_ type: Int32) -> String {
        let names = [
            1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
            10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
            17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4",
            23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2",
        ]
        return names[Int(type)] ?? "type \(type)"
    }
}
