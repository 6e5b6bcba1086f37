/// Core ML feature descriptions written the way Xcode's model view writes them.
enum FeatureDescriptions {
    static func feature(_ description: CoreML_Specification_FeatureDescription) -> Feature {
        let type = description.type
        var shape: [Int64]?
        if case .multiArrayType(let array)? = type.type { shape = array.shape }
        if case .stateType(let state)? = type.type, case .arrayType(let array)? = state.type { shape = array.shape }
        if case .imageType(let image)? = type.type { shape = [image.height, image.width] }
        return Feature(name: description.name, type: text(type), shape: shape, isOptional: type.isOptional,
                       description: description.shortDescription.isEmpty ? nil : description.shortDescription)
    }

    static func text(_ type: CoreML_Specification_FeatureType) -> String {
        switch type.type {
        case .int64Type: return "Int64"
        case .doubleType: return "Double"
        case .stringType: return "String"
        case .imageType(let image):
            let space = switch image.colorSpace {
            case .grayscale: "Grayscale"
            case .rgb: "RGB"
            case .bgr: "BGR"
            case .grayscaleFloat16: "Grayscale16Half"
            default: "color space \(image.colorSpace.rawValue)"
            }
            return "Image (\(space) \(image.width) × \(image.height))"
        case .multiArrayType(let array): return "MultiArray (\(arrayText(array)))"
        case .dictionaryType(let dictionary):
            let key = if case .int64KeyType? = dictionary.keyType { "Int64" } else { "String" }
            return "Dictionary (\(key) → Double)"
        case .sequenceType(let sequence):
            let element = if case .int64Type? = sequence.type { "Int64" } else { "String" }
            return "Sequence of \(element)"
        case .stateType(let state):
            if case .arrayType(let array)? = state.type { return "State (\(arrayText(array)))" }
            return "State"
        case nil: return "unspecified"
        }
    }

    static func arrayText(_ array: CoreML_Specification_ArrayFeatureType) -> String {
        let element = switch array.dataType {
        case .float32: "Float32"
        case .double: "Double"
        case .int32: "Int32"
        case .int8: "Int8"
        case .float16: "Float16"
        default: "type \(array.dataType.rawValue)"
        }
        let shape = array.shape.map(String.init).joined(separator: " × ")
        return shape.isEmpty ? element : element + " " + shape
    }
}
