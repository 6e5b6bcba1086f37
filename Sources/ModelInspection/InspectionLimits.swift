/// Bounds on what inspecting one model may read into memory and how much it lists.
///
/// Every count and length read from a file is checked against the file's size and these limits before
/// anything is allocated for it, so a hostile file costs at most about these amounts.
public struct InspectionLimits: Sendable, Equatable {
    /// The largest protobuf message (an `.mlmodel`, a package's specification, an ONNX file) decoded whole.
    /// Larger Core ML and ONNX files are walked field by field instead and only their small parts are decoded
    /// (their weights are counted by size, not read).
    public var maximumMessageBytes: UInt64
    /// The largest part decoded on its own when walking a large file (a layer, a graph node, a description).
    public var maximumPartBytes: UInt64
    /// The largest safetensors JSON header or GGUF metadata section read.
    public var maximumHeaderBytes: UInt64
    /// The largest JSON side file read (`Manifest.json`, an `.mlmodelc`'s `metadata.json`).
    public var maximumSideFileBytes: UInt64
    /// The most tensors listed by name (all are counted).
    public var maximumListedTensors: Int
    /// The most class labels kept (all are counted in a note when there are more).
    public var maximumListedLabels: Int
    /// The most files listed for a folder, and the most entries walked.
    public var maximumFolderEntries: Int

    /// Defaults for a command-line tool: 256 MiB messages, 64 MiB parts and headers, 16 MiB side files.
    public static let `default` = InspectionLimits(
        maximumMessageBytes: 256 << 20, maximumPartBytes: 64 << 20, maximumHeaderBytes: 64 << 20,
        maximumSideFileBytes: 16 << 20, maximumListedTensors: 2000, maximumListedLabels: 10_000,
        maximumFolderEntries: 100_000)

    /// Limits from their parts.
    public init(maximumMessageBytes: UInt64, maximumPartBytes: UInt64, maximumHeaderBytes: UInt64,
                maximumSideFileBytes: UInt64, maximumListedTensors: Int, maximumListedLabels: Int,
                maximumFolderEntries: Int) {
        self.maximumMessageBytes = maximumMessageBytes
        self.maximumPartBytes = maximumPartBytes
        self.maximumHeaderBytes = maximumHeaderBytes
        self.maximumSideFileBytes = maximumSideFileBytes
        self.maximumListedTensors = maximumListedTensors
        self.maximumListedLabels = maximumListedLabels
        self.maximumFolderEntries = maximumFolderEntries
    }
}
