import CofferFormat

/// Checks an upload's first bytes: they must start a valid Coffer container whose stated total
/// length equals the upload's size (when it is known in advance; ``BlobIntake`` checks it at the
/// end otherwise), and whose header is at most ``SealedModel/maximumHeaderLength``. Fed incrementally;
/// keeps at most 4 KiB in memory (a version 2 chunk table is checked once the blob is stored, by
/// ``BlobStore/header(of:)``).
struct UploadHeaderCheck {
    private var prefix: [UInt8] = []
    private(set) var header: ContainerHeader.Preamble?
    let declaredSize: Int64?

    init(declaredSize: Int64?) { self.declaredSize = declaredSize }

    /// Feeds the next bytes; throws once the header is known to be invalid.
    mutating func feed(_ bytes: some Collection<UInt8>) throws {
        guard header == nil else { return }
        prefix.append(contentsOf: bytes.prefix(ContainerHeader.maximumLength - prefix.count))
        guard prefix.count >= ContainerHeader.prefixLength else { return }
        guard let parsed = try ContainerHeader.preamble(from: prefix) else { return }
        // `exactly:`: a negative stated size is a mismatch, not a conversion trap.
        if let declaredSize, UInt64(exactly: declaredSize) != parsed.sealedLength {
            throw ContainerError.lengthMismatch(expected: parsed.sealedLength, actual: UInt64(clamping: declaredSize))
        }
        try parsed.checkHeaderLength(atMost: SealedModel.maximumHeaderLength)
        header = parsed
        prefix = []
    }
}
