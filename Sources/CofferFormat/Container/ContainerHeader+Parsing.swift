extension ContainerHeader {
    /// What the first bytes of a container say about its layout, learned before any chunk table
    /// is read: enough to check a file's or an upload's exact length before allocating anything
    /// for the rest of its header.
    public struct Preamble: Sendable, Equatable {
        /// The format version (1 or 2).
        public let version: UInt16
        /// The length of the whole header: for version 2, fields, chunk table and MAC.
        public let headerLength: Int
        /// The exact length of the whole container.
        public let sealedLength: UInt64
        /// The plaintext's length.
        let plaintextLength: UInt64
        /// Version 2: where the chunk table starts in the header, and how many entries it has.
        let chunkTableOffset: Int
        let chunkCount: Int

        /// Throws ``ContainerError/headerTooLong(length:limit:)`` when the header this preamble
        /// announces (version 2: fields, chunk table and MAC) is longer than `limit` bytes.
        public func checkHeaderLength(atMost limit: Int) throws {
            guard headerLength <= limit else { throw ContainerError.headerTooLong(length: headerLength, limit: limit) }
        }
    }

    /// Reads the preamble from the start of a container, checking magic, version, bounds and every
    /// field rule that needs no key; nil while `prefix` is too short to tell. No container needs
    /// more than ``maximumLength`` bytes for this.
    public static func preamble(from prefix: some Collection<UInt8>) throws -> Preamble? {
        let bytes = Array(prefix.prefix(maximumLength))
        let magicBytes = min(bytes.count, magic.count)
        guard Array(bytes[0..<magicBytes]) == Array(magic[0..<magicBytes]) else { throw ContainerError.notAContainer }
        guard bytes.count >= prefixLength else { return nil }
        let (version, length) = try versionAndLength(bytes)
        guard bytes.count >= length else { return nil }
        switch version {
        case 1:
            let header = try ContainerHeader(parsing: Array(bytes[0..<length]))
            return Preamble(version: 1, headerLength: length, sealedLength: header.sealedLength, plaintextLength: header.plaintextLength,
                            chunkTableOffset: length, chunkCount: 0)
        default:
            let fields = try Fields(parsing: bytes[0..<length], version: 2)
            // chunkCount < 2^32 fits `Int` wherever the header's length does (Fields checked that).
            return Preamble(version: 2, headerLength: fields.headerLength, sealedLength: fields.sealedLength,
                            plaintextLength: fields.plaintextLength, chunkTableOffset: length, chunkCount: Int(fields.chunkCount))
        }
    }

    /// Magic, version and the length the prefix announces: the whole header for version 1, the
    /// fields for version 2. Bounds are checked here, before anything is allocated from them.
    static func versionAndLength(_ bytes: [UInt8]) throws -> (UInt16, Int) {
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else { throw ContainerError.notAContainer }
        var cursor = ByteCursor(Array(bytes.prefix(prefixLength)))
        _ = try cursor.take(magic.count, or: ContainerError.notAContainer)
        let version = try cursor.integer(UInt16.self, or: truncated)
        let length = Int(try cursor.integer(UInt16.self, or: truncated))
        switch version {
        case 1:
            guard (minimumLength...maximumLength).contains(length) else {
                throw ContainerError.malformedHeader("header length \(length) out of range")
            }
        case 2:
            guard (minimumFieldsLength...maximumLength).contains(length) else {
                throw ContainerError.malformedHeader("fields length \(length) out of range")
            }
        default:
            throw ContainerError.unsupportedVersion(version)
        }
        return (version, length)
    }

    /// Parses and validates a whole encoded header, chunk table and MAC included (the MAC is
    /// checked later, with the key).
    ///
    /// Refuses every rule of docs/FORMAT.md that can be checked without a key.
    public init(parsing bytes: [UInt8]) throws {
        let (version, length) = try Self.versionAndLength(bytes)
        guard bytes.count >= length else { throw truncated }
        let fields = try Fields(parsing: bytes[0..<length], version: version)
        var cursor = ByteCursor(bytes)
        _ = try cursor.take(version == 1 ? length - Self.macLength : length, or: truncated)
        var table: ChunkTable?
        if version == 2 {
            guard bytes.count == fields.headerLength else {
                throw ContainerError.malformedHeader("header is \(bytes.count) bytes, its fields say \(fields.headerLength)")
            }
            let count = Int(fields.chunkCount)
            let tableBytes = Array(try cursor.take(count * ChunkTable.entryLength, or: truncated))
            table = try ChunkTable(parsing: tableBytes, count: count, plaintextLength: fields.plaintextLength)
        }
        let mac = Array(try cursor.take(Self.macLength, or: truncated))
        guard cursor.remaining == 0 else {
            throw ContainerError.malformedHeader("header length field disagrees with its fields")
        }
        self.init(
            suite: fields.suite, chunkSizeExponent: fields.chunkSizeExponent, payloadKind: fields.payloadKind,
            keyDerivation: fields.keyDerivation, plaintextLength: fields.plaintextLength, salt: fields.salt,
            originalName: fields.originalName)
        self.version = version
        self.chunkTable = table
        self.mac = mac
    }

    /// The fields of a header, before its chunk table (version 2) or MAC (version 1).
    struct Fields {
        var suite: CipherSuite
        var chunkSizeExponent: UInt8
        var payloadKind: PayloadKind
        var keyDerivation: KeyDerivation
        var plaintextLength: UInt64
        var salt: [UInt8]
        var chunkCount: UInt64
        var originalName: String
        /// The whole header's length and the whole container's, computed without overflow.
        var headerLength: Int
        var sealedLength: UInt64

        /// Parses the fields at the start of `bytes`: for version 1 the whole header (it must end
        /// with the MAC exactly), for version 2 exactly the announced fields length.
        init(parsing slice: ArraySlice<UInt8>, version: UInt16) throws {
            let bytes = Array(slice)
            let (_, length) = try ContainerHeader.versionAndLength(bytes)
            var cursor = ByteCursor(bytes)
            _ = try cursor.take(ContainerHeader.prefixLength, or: truncated)
            let suiteCode = try cursor.integer(UInt8.self, or: truncated)
            guard let suite = CipherSuite(rawValue: suiteCode), suite.version == version else {
                throw ContainerError.malformedHeader("unknown cipher suite")
            }
            self.suite = suite
            let exponent = try cursor.integer(UInt8.self, or: truncated)
            if version == 1 {
                guard ContainerHeader.chunkSizeExponents.contains(exponent) else {
                    throw ContainerError.malformedHeader("chunk size 2^\(exponent) not in 2^16...2^20")
                }
            } else {
                guard exponent == 0 else { throw ContainerError.malformedHeader("reserved byte is not 0") }
            }
            chunkSizeExponent = exponent
            guard let kind = PayloadKind(rawValue: try cursor.integer(UInt8.self, or: truncated)) else {
                throw ContainerError.malformedHeader("unknown payload kind")
            }
            payloadKind = kind
            let derivationCode = try cursor.integer(UInt8.self, or: truncated)
            plaintextLength = try cursor.integer(UInt64.self, or: truncated)
            guard plaintextLength <= ContainerHeader.maximumPlaintextLength else {
                throw ContainerError.malformedHeader("plaintext length over 2^48 bytes")
            }
            salt = Array(try cursor.take(ContainerHeader.saltLength, or: truncated))
            if version == 2 {
                chunkCount = UInt64(try cursor.integer(UInt32.self, or: truncated))
                guard chunkCount >= 1, plaintextLength == 0 ? chunkCount == 1 : chunkCount <= plaintextLength else {
                    throw ContainerError.malformedHeader("chunk count \(chunkCount) does not fit a plaintext of \(plaintextLength) bytes")
                }
            } else {
                let size = UInt64(1) << exponent
                chunkCount = plaintextLength == 0 ? 1 : (plaintextLength + size - 1) / size
            }
            let keyIDLength = Int(try cursor.integer(UInt8.self, or: truncated))
            let keyID = try ContainerHeader.decodeKeyID(try cursor.take(keyIDLength, or: truncated))
            let nameLength = Int(try cursor.integer(UInt16.self, or: truncated))
            guard nameLength <= ContainerHeader.maximumNameLength else {
                throw ContainerError.malformedHeader("original name longer than \(ContainerHeader.maximumNameLength) bytes")
            }
            originalName = try ContainerHeader.decodeName(try cursor.take(nameLength, or: truncated))
            switch derivationCode {
            case 1:
                guard !keyID.isEmpty else { throw ContainerError.malformedHeader("model key container without key ID") }
                keyDerivation = .modelKey(id: keyID)
            case 2:
                guard keyID.isEmpty else { throw ContainerError.malformedHeader("passphrase container with a key ID") }
                let logN = try cursor.integer(UInt8.self, or: truncated)
                let r = try cursor.integer(UInt32.self, or: truncated)
                let p = try cursor.integer(UInt32.self, or: truncated)
                let scryptSalt = Array(try cursor.take(ScryptParameters.saltLength, or: truncated))
                keyDerivation = .passphrase(ScryptParameters(logN: logN, r: r, p: p, salt: scryptSalt))
            default:
                throw ContainerError.malformedHeader("unknown key derivation \(derivationCode)")
            }
            if version == 1 {
                guard cursor.remaining == ContainerHeader.macLength else {
                    throw ContainerError.malformedHeader("header length field disagrees with its fields")
                }
                headerLength = length
            } else {
                guard cursor.remaining == 0 else {
                    throw ContainerError.malformedHeader("fields length field disagrees with its fields")
                }
                // chunkCount < 2^32, so the table's length fits easily in 64 bits; where `Int` has 32
                // (watchOS) a header that long cannot be held, and is refused instead of trapping.
                let total = UInt64(length) + chunkCount * UInt64(ChunkTable.entryLength) + UInt64(ContainerHeader.macLength)
                guard let fitting = Int(exactly: total) else {
                    throw ContainerError.malformedHeader("a chunk table of \(chunkCount) entries is too large for this platform")
                }
                headerLength = fitting
            }
            // ≤ 2^38 + 2^48 + 2^36: no overflow.
            sealedLength = UInt64(headerLength) + plaintextLength + chunkCount * UInt64(ContainerHeader.tagLength)
        }
    }

    /// Key IDs are 1...64 bytes of `A-Z a-z 0-9 . _ -` (empty only for passphrases).
    static func decodeKeyID(_ bytes: ArraySlice<UInt8>) throws -> String {
        guard bytes.count <= maximumKeyIDLength, bytes.allSatisfy(isKeyIDByte) else {
            throw ContainerError.malformedHeader("key ID has characters outside A-Z a-z 0-9 . _ -")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a byte may appear in a key ID.
    static func isKeyIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// Names are valid UTF-8 with no "/" or NUL, and are neither "." nor "..".
    static func decodeName(_ bytes: ArraySlice<UInt8>) throws -> String {
        // Decoding replaces invalid UTF-8 with U+FFFD, so valid input is exactly what reads back.
        // (`String(validating:as:)` would say it directly, but needs iOS 18 / macOS 15, above the
        // SDK's floors.)
        let name = String(decoding: bytes, as: UTF8.self)
        guard name.utf8.elementsEqual(bytes) else {
            throw ContainerError.malformedHeader("original name is not valid UTF-8")
        }
        guard isValidName(name) else { throw ContainerError.malformedHeader("original name is not a plain file name") }
        return name
    }

    /// Whether `name` may be recorded as an original name.
    public static func isValidName(_ name: String) -> Bool {
        name.utf8.count <= maximumNameLength && name != "." && name != ".."
            && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }
}

private var truncated: ContainerError { .malformedHeader("header ends early") }
