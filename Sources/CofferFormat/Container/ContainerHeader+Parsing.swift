extension ContainerHeader {
    /// Reads the header length from the first ``prefixLength`` bytes, checking magic, version and bounds.
    ///
    /// Call this before reading the rest, so that nothing is allocated from an unchecked length.
    public static func encodedLength(fromPrefix prefix: some Collection<UInt8>) throws -> Int {
        let bytes = Array(prefix.prefix(prefixLength))
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            throw ContainerError.notAContainer
        }
        var cursor = ByteCursor(bytes)
        _ = try cursor.take(magic.count, or: ContainerError.notAContainer)
        let version = try cursor.integer(UInt16.self, or: truncated)
        guard version == currentVersion else { throw ContainerError.unsupportedVersion(version) }
        let length = Int(try cursor.integer(UInt16.self, or: truncated))
        guard (minimumLength...maximumLength).contains(length) else {
            throw ContainerError.malformedHeader("header length \(length) out of range")
        }
        return length
    }

    /// Parses and validates a whole encoded header (its MAC is checked later, with the key).
    ///
    /// Refuses every rule of docs/FORMAT.md that can be checked without a key.
    public init(parsing bytes: [UInt8]) throws {
        let length = try Self.encodedLength(fromPrefix: bytes)
        guard bytes.count == length else {
            throw ContainerError.malformedHeader("header is \(bytes.count) bytes, its length field says \(length)")
        }
        var cursor = ByteCursor(bytes)
        _ = try cursor.take(Self.prefixLength, or: truncated)

        guard let suite = CipherSuite(rawValue: try cursor.integer(UInt8.self, or: truncated)) else {
            throw ContainerError.malformedHeader("unknown cipher suite")
        }
        let exponent = try cursor.integer(UInt8.self, or: truncated)
        guard Self.chunkSizeExponents.contains(exponent) else {
            throw ContainerError.malformedHeader("chunk size 2^\(exponent) not in 2^16...2^20")
        }
        guard let kind = PayloadKind(rawValue: try cursor.integer(UInt8.self, or: truncated)) else {
            throw ContainerError.malformedHeader("unknown payload kind")
        }
        let derivationCode = try cursor.integer(UInt8.self, or: truncated)
        let plaintextLength = try cursor.integer(UInt64.self, or: truncated)
        guard plaintextLength <= Self.maximumPlaintextLength else {
            throw ContainerError.malformedHeader("plaintext length over 2^48 bytes")
        }
        let salt = Array(try cursor.take(Self.saltLength, or: truncated))

        let keyIDLength = Int(try cursor.integer(UInt8.self, or: truncated))
        let keyID = try Self.decodeKeyID(try cursor.take(keyIDLength, or: truncated))
        let nameLength = Int(try cursor.integer(UInt16.self, or: truncated))
        guard nameLength <= Self.maximumNameLength else {
            throw ContainerError.malformedHeader("original name longer than \(Self.maximumNameLength) bytes")
        }
        let name = try Self.decodeName(try cursor.take(nameLength, or: truncated))

        let derivation: KeyDerivation
        switch derivationCode {
        case 1:
            guard !keyID.isEmpty else { throw ContainerError.malformedHeader("model key container without key ID") }
            derivation = .modelKey(id: keyID)
        case 2:
            guard keyID.isEmpty else { throw ContainerError.malformedHeader("passphrase container with a key ID") }
            let logN = try cursor.integer(UInt8.self, or: truncated)
            let r = try cursor.integer(UInt32.self, or: truncated)
            let p = try cursor.integer(UInt32.self, or: truncated)
            let scryptSalt = Array(try cursor.take(ScryptParameters.saltLength, or: truncated))
            derivation = .passphrase(ScryptParameters(logN: logN, r: r, p: p, salt: scryptSalt))
        default:
            throw ContainerError.malformedHeader("unknown key derivation \(derivationCode)")
        }
        let mac = Array(try cursor.take(Self.macLength, or: truncated))
        guard cursor.remaining == 0 else {
            throw ContainerError.malformedHeader("header length field disagrees with its fields")
        }

        self.init(
            suite: suite, chunkSizeExponent: exponent, payloadKind: kind, keyDerivation: derivation,
            plaintextLength: plaintextLength, salt: salt, originalName: name
        )
        self.mac = mac
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
        guard let name = String(validating: bytes, as: UTF8.self) else {
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
