/// The authenticated header of a Coffer container, format version 1 or 2 (docs/FORMAT.md).
///
/// Every field is readable without a key, so `coffer inspect` can show it; none of it is secret.
/// The MAC that ends the header commits to every byte before it (for version 2, the chunk table
/// too) and to the key.
public struct ContainerHeader: Sendable, Equatable {
    /// The eight bytes every container starts with: `89 43 4F 46 46 45 52 0A` ("\x89COFFER\n").
    public static let magic: [UInt8] = [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A]
    /// The format version this build writes by default; it reads 1 and 2.
    public static let currentVersion: UInt16 = 2
    /// The format versions this build reads and writes.
    public static let supportedVersions: ClosedRange<UInt16> = 1...2
    /// Bytes that identify a container and give its header length: magic, version, header length.
    public static let prefixLength = 12
    /// No valid header is longer; a reader refuses larger claims before allocating.
    public static let maximumLength = 4096
    /// No valid version 1 header is shorter: a one-byte key ID, an empty name, no scrypt fields.
    public static let minimumLength = 92
    /// No valid version 2 fields are shorter: a one-byte key ID, an empty name, no scrypt fields.
    public static let minimumFieldsLength = 64
    /// Bytes of the salt that makes every file key unique.
    public static let saltLength = 32
    /// Bytes of the header MAC (HMAC-SHA-256).
    public static let macLength = 32
    /// Bytes of the authentication tag that follows every chunk.
    public static let tagLength = 16
    /// Allowed chunk size exponents: 64 KiB to 1 MiB.
    public static let chunkSizeExponents: ClosedRange<UInt8> = 16...20
    /// The largest plaintext a container may hold: 2^48 bytes (256 TiB).
    public static let maximumPlaintextLength: UInt64 = 1 << 48
    /// The longest key ID, in bytes.
    public static let maximumKeyIDLength = 64
    /// The longest original name, in UTF-8 bytes.
    public static let maximumNameLength = 1024

    /// The format version (1 or 2).
    public var version: UInt16
    /// The algorithms used; each version has exactly one.
    public var suite: CipherSuite
    /// log2 of the chunk size (version 1); 0 in version 2, whose chunks are listed in ``chunkTable``.
    public var chunkSizeExponent: UInt8
    /// Whether the payload is one file or a packed directory tree.
    public var payloadKind: PayloadKind
    /// Where the key material comes from.
    public var keyDerivation: KeyDerivation
    /// The number of plaintext bytes sealed.
    public var plaintextLength: UInt64
    /// Random bytes that, with the model key, derive this file's keys.
    public var salt: [UInt8]
    /// The file or folder name the plaintext had when it was sealed (may be empty).
    public var originalName: String
    /// Every chunk's ID and length (version 2 only).
    public var chunkTable: ChunkTable?
    /// HMAC-SHA-256 over the encoded header before it; all zero until sealed.
    public var mac: [UInt8]

    /// The model key ID the container was sealed with, or `nil` for a passphrase.
    public var keyID: String? {
        if case .modelKey(let id) = keyDerivation { return id }
        return nil
    }

    /// The chunk size in bytes (version 1; version 2 chunks vary, see ``largestChunkLength``).
    public var chunkSize: Int { 1 << Int(chunkSizeExponent) }

    /// The longest chunk's plaintext: what a buffer for any one chunk must hold.
    public var largestChunkLength: Int { chunkTable?.longestChunk ?? chunkSize }

    /// The number of chunks: at least one, even for an empty plaintext.
    public var chunkCount: UInt64 {
        if let chunkTable { return UInt64(chunkTable.count) }
        return plaintextLength == 0 ? 1 : (plaintextLength + UInt64(chunkSize) - 1) / UInt64(chunkSize)
    }

    /// The length of the encoded header, MAC included (and for version 2 the chunk table):
    /// arithmetic on the fields, so per-chunk offsets are cheap to ask for.
    public var encodedLength: Int {
        version >= 2 ? lengthField + (chunkTable?.count ?? 0) * ChunkTable.entryLength + Self.macLength : lengthField
    }

    /// The exact length of the whole container: header plus every chunk and its tag.
    public var sealedLength: UInt64 {
        UInt64(encodedLength) + plaintextLength + chunkCount * UInt64(Self.tagLength)
    }

    /// The plaintext byte range chunk `index` holds.
    public func plaintextRange(ofChunk index: UInt64) -> Range<UInt64> { layout.plaintextRange(ofChunk: index) }

    /// The offset in the container of chunk `index`'s ciphertext.
    public func sealedOffset(ofChunk index: UInt64) -> UInt64 { layout.sealedOffset(ofChunk: index) }

    /// Where every chunk lies, computed once (encoding the header is not free; chunk loops use this).
    var layout: ChunkLayout {
        ChunkLayout(headerLength: UInt64(encodedLength), chunkSize: UInt64(chunkSize), plaintextLength: plaintextLength,
                    table: chunkTable)
    }

    /// Creates a header; `mac` is filled in when the container is sealed.
    public init(
        suite: CipherSuite = .aes256GCMWithHKDFSHA256,
        chunkSizeExponent: UInt8,
        payloadKind: PayloadKind,
        keyDerivation: KeyDerivation,
        plaintextLength: UInt64,
        salt: [UInt8],
        originalName: String
    ) {
        self.version = suite.version
        self.suite = suite
        self.chunkSizeExponent = chunkSizeExponent
        self.payloadKind = payloadKind
        self.keyDerivation = keyDerivation
        self.plaintextLength = plaintextLength
        self.salt = salt
        self.originalName = originalName
        self.mac = [UInt8](repeating: 0, count: Self.macLength)
    }
}

extension ContainerHeader {
    /// The cipher suite: how file keys are derived, chunks sealed and the header authenticated.
    public enum CipherSuite: UInt8, Sendable {
        /// Version 1: AES-256-GCM chunks, HKDF-SHA-256 key derivation, HMAC-SHA-256 header MAC.
        case aes256GCMWithHKDFSHA256 = 1
        /// Version 2: AES-256-GCM chunks sealed deterministically (nonce from an HMAC-SHA-256
        /// chunk ID), HKDF-SHA-256 key derivation, HMAC-SHA-256 header MAC.
        case deterministicAES256GCM = 2

        /// The format version that uses this suite.
        public var version: UInt16 { UInt16(rawValue) }
    }

    /// What the plaintext is.
    public enum PayloadKind: UInt8, Sendable {
        /// The bytes of one regular file.
        case file = 1
        /// A directory packed as described in docs/FORMAT.md ("Packed tree").
        case directory = 2
    }

    /// Where the input key material comes from.
    public enum KeyDerivation: Sendable, Equatable {
        /// A 256-bit model key, named by its ID (a hint for finding the key, never trusted alone).
        case modelKey(id: String)
        /// scrypt over a passphrase, with its parameters and its own salt.
        case passphrase(ScryptParameters)
    }
}

/// The positions of a container's chunks: plaintext ranges and sealed offsets, fixed-size
/// (version 1) or from the chunk table (version 2).
struct ChunkLayout: Sendable {
    let headerLength: UInt64
    let chunkSize: UInt64
    let plaintextLength: UInt64
    let table: ChunkTable?

    var chunkCount: UInt64 {
        if let table { return UInt64(table.count) }
        return plaintextLength == 0 ? 1 : (plaintextLength + chunkSize - 1) / chunkSize
    }

    func plaintextRange(ofChunk index: UInt64) -> Range<UInt64> {
        if let table { return table.plaintextRange(ofChunk: Int(index)) }
        let start = index * chunkSize
        return start..<min(start + chunkSize, plaintextLength)
    }

    func sealedOffset(ofChunk index: UInt64) -> UInt64 {
        if let table { return headerLength + table.starts[Int(index)] + index * UInt64(ContainerHeader.tagLength) }
        return headerLength + index * (chunkSize + UInt64(ContainerHeader.tagLength))
    }

    /// The chunk that holds plaintext offset `offset` (below the plaintext length).
    func chunk(containing offset: UInt64) -> UInt64 {
        if let table { return UInt64(table.chunk(containing: offset)) }
        return offset / chunkSize
    }
}
