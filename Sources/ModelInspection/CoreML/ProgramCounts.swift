/// Operation counts and constant sizes of an ML program (`MILSpec.Program`).
struct ProgramCounts {
    /// Operations by type, nested blocks included.
    var operations: [String: Int] = [:]
    /// Elements of constant tensors (`const` operations' outputs).
    var constantElements: UInt64 = 0
    /// Functions and the opset of their main block.
    var functions: [String: String] = [:]

    init(_ program: CoreML_Specification_MILSpec_Program) {
        for (name, function) in program.functions {
            functions[name] = function.opset
            if let block = function.blockSpecializations[function.opset] ?? function.blockSpecializations.values.first {
                add(block, depth: 0)
            }
        }
    }

    private mutating func add(_ block: CoreML_Specification_MILSpec_Block, depth: Int) {
        guard depth < 64 else { return }
        for operation in block.operations {
            operations[operation.type, default: 0] += 1
            if operation.type == "const" {
                for output in operation.outputs {
                    // Scalars (rank 0: flags, axes, epsilons) are settings, not parameters.
                    guard case .tensorType(let tensor)? = output.type.type, !tensor.dimensions.isEmpty else { continue }
                    let elements = tensor.dimensions.reduce(UInt64(1)) { total, dimension in
                        if case .constant(let constant)? = dimension.dimension { return total.multipliedSaturated(by: constant.size) }
                        return total
                    }
                    constantElements = constantElements.addingSaturated(elements)
                }
            }
            for inner in operation.blocks { add(inner, depth: depth + 1) }
        }
    }
}
