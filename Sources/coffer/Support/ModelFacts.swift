import CofferFormat
import Foundation

/// What an unsealed file or folder is: its model kind (by name and magic), size and files.
struct ModelFacts: Encodable {
    struct File: Encodable {
        let path: String
        let type: String
        let size: UInt64?
        let mode: String
    }

    let kind: String
    let size: UInt64
    let files: [File]?

    init(path: String, isFolder: Bool) throws {
        if isFolder {
            let tree = try PackedTree(root: path)
            files = tree.entries.map { entry in
                switch entry.kind {
                case .directory: return File(path: entry.path + "/", type: "directory", size: nil, mode: Self.octal(entry.mode))
                case .file(let size): return File(path: entry.path, type: "file", size: size, mode: Self.octal(entry.mode))
                case .symlink(let target): return File(path: entry.path + " -> " + target, type: "symlink", size: nil, mode: "")
                }
            }
            size = tree.entries.reduce(0) { total, entry in
                if case .file(let size) = entry.kind { return total + size }
                return total
            }
            kind = Self.folderKind(path)
        } else {
            let file = try PositionalFile(readingAt: path)
            size = try file.size()
            kind = Self.fileKind(path, prefix: try file.read(count: 96, at: 0))
            files = nil
        }
    }

    static func octal(_ mode: UInt16) -> String { String(mode, radix: 8).leftPadded(to: 3) }

    static func folderKind(_ path: String) -> String {
        let lower = path.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if lower.hasSuffix(".mlmodelc") { return "Core ML compiled model (.mlmodelc)" }
        if lower.hasSuffix(".mlpackage") { return "Core ML package (.mlpackage)" }
        return "folder"
    }

    static func fileKind(_ path: String, prefix: [UInt8]) -> String {
        let lower = path.lowercased()
        if prefix.starts(with: Array("GGUF".utf8)) { return "GGUF model" }
        if RNCryptor.looksLikeRNCryptor(prefix) && prefix.count >= 66 && !lower.hasSuffix(".onnx") {
            return "possibly RNCryptor v3 encrypted (\(prefix[1] == 1 ? "password" : "key")-based)"
        }
        if prefix.count >= 9, prefix[8] == UInt8(ascii: "{"), prefix[0..<8].reversed().reduce(UInt64(0), { $0 << 8 | UInt64($1) }) > 0 {
            return "safetensors"
        }
        if lower.hasSuffix(".safetensors") { return "safetensors (header not recognised)" }
        if lower.hasSuffix(".onnx") { return "ONNX model" }
        if lower.hasSuffix(".mlmodel") { return "Core ML model (.mlmodel)" }
        if lower.hasSuffix(".gguf") { return "GGUF (magic not found)" }
        return "file of unknown kind"
    }

    var text: String {
        var lines = ["\(kind), \(size) bytes"]
        for file in files ?? [] {
            let size = file.size.map { " \($0)" } ?? ""
            lines.append("  \(file.mode.isEmpty ? "   " : file.mode) \(Printable.text(file.path))\(size)")
        }
        return lines.joined(separator: "\n")
    }
}
