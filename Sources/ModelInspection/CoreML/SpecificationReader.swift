import Foundation
import SwiftProtobuf

/// Reads a Core ML specification (`Model` protobuf) from an `.mlmodel` file or a package's `model.mlmodel`.
///
/// Up to ``InspectionLimits/maximumMessageBytes`` it is decoded whole. A larger file is walked as a
/// ``Skeleton``: the description and the layers' names and types are kept, the weights inside layers and any
/// other part over ``InspectionLimits/maximumPartBytes`` are skipped and counted by size.
enum SpecificationReader {
    static let format = "Core ML model"

    /// Model type fields whose content is a neural network (`layers` = 1).
    static let neuralNetworkFields = [303, 403, 500]

    /// Rules for a large specification: keep all but the neural networks' layer payloads.
    static let skeletonRule: MessageRule = {
        var layerFields: [Int: FieldRule] = [:]
        // NeuralNetworkLayer: fields 1–10 are its name, inputs, outputs and tensor shapes; 100 and up its one
        // payload (the layer type with its weights).
        for number in 1...99 { layerFields[number] = .keep }
        let layerRule = MessageRule(fields: layerFields, otherwise: .stub)
        let network = MessageRule(fields: [1: .message(layerRule)], otherwise: .keep)
        var top: [Int: FieldRule] = [:]
        for number in neuralNetworkFields { top[number] = .message(network) }
        // Other model types (pipelines, tree ensembles, …) are kept whole if they fit in a part, else their
        // type alone is kept.
        return MessageRule(fields: top, otherwise: .keepOrStub)
    }()

    /// The decoded model and, when it was walked as a skeleton, the bytes skipped.
    static func read(_ source: any ByteSource, limits: InspectionLimits) throws -> (CoreML_Specification_Model, skipped: UInt64?) {
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = 64
        if source.count <= limits.maximumMessageBytes {
            let data = try source.read(at: 0, length: Int(source.count))
            return (try decode(data, options: options), nil)
        }
        let skeleton = try Skeleton.build(source, length: source.count, rule: skeletonRule, limits: limits, format: format)
        return (try decode(skeleton.bytes, options: options), skeleton.droppedBytes)
    }

    private static func decode(_ data: Data, options: BinaryDecodingOptions) throws -> CoreML_Specification_Model {
        do {
            return try CoreML_Specification_Model(serializedBytes: data, options: options)
        } catch {
            throw InspectionError.malformed(format: format, reason: "not a valid model specification (\(error))")
        }
    }

    /// Facts of a specification file on its own (`.mlmodel`).
    static func facts(_ source: any ByteSource, limits: InspectionLimits, notes: inout [String]) throws -> CoreMLFacts {
        let (model, skipped) = try read(source, limits: limits)
        var facts = try CoreMLFacts(model, limits: limits)
        if let skipped {
            facts.weightBytes = facts.weightBytes.addingSaturated(skipped)
            notes.append("the specification is over \(ByteText.describe(limits.maximumMessageBytes)): layer contents and parts over "
                + "\(ByteText.describe(limits.maximumPartBytes)) were skipped, so weights are counted by size (\(skipped) bytes) "
                + "and parameters are not counted")
        }
        return facts
    }
}
