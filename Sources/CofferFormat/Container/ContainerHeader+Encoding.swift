extension ContainerHeader {
    /// The header bytes the MAC covers: everything but the MAC itself (docs/FORMAT.md, "Header";
    /// for version 2 the fields and the chunk table).
    public func encodedBody() -> [UInt8] {
        let keyID = Array((self.keyID ?? "").utf8)
        let name = Array(originalName.utf8)
        var scryptBytes = ByteWriter()
        if case .passphrase(let parameters) = keyDerivation {
            scryptBytes.append(parameters.logN)
            scryptBytes.append(parameters.r)
            scryptBytes.append(parameters.p)
            scryptBytes.append(contentsOf: parameters.salt)
        }
        let tabled = version >= 2
        let total = lengthField

        var writer = ByteWriter()
        writer.append(contentsOf: Self.magic)
        writer.append(version)
        writer.append(UInt16(total))
        writer.append(suite.rawValue)
        writer.append(chunkSizeExponent)
        writer.append(payloadKind.rawValue)
        writer.append(keyDerivation.code)
        writer.append(plaintextLength)
        writer.append(contentsOf: salt)
        if tabled { writer.append(UInt32(chunkTable?.count ?? 0)) }
        writer.append(UInt8(keyID.count))
        writer.append(contentsOf: keyID)
        writer.append(UInt16(name.count))
        writer.append(contentsOf: name)
        writer.append(contentsOf: scryptBytes.bytes)
        if tabled, let chunkTable { writer.append(contentsOf: chunkTable.encoded()) }
        return writer.bytes
    }

    /// The length the header's length field records: the whole header for version 1, the fields
    /// for version 2. Computed from the fields' sizes, without encoding anything.
    var lengthField: Int {
        let scrypt = if case .passphrase = keyDerivation { 1 + 4 + 4 + ScryptParameters.saltLength } else { 0 }
        return Self.prefixLength + 12 + salt.count + (version >= 2 ? 4 : 0) + 1 + (keyID ?? "").utf8.count + 2
            + originalName.utf8.count + scrypt + (version >= 2 ? 0 : Self.macLength)
    }

    /// The whole header: body then MAC.
    public func encoded() -> [UInt8] { encodedBody() + mac }
}

extension ContainerHeader.KeyDerivation {
    /// The byte that names the key derivation in the header.
    var code: UInt8 {
        switch self {
        case .modelKey: return 1
        case .passphrase: return 2
        }
    }
}
