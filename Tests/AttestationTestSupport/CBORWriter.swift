import CofferAttestation

/// Encodes CBOR values for tests, in the shortest head form, keys in the order given.
enum CBORWriter {
    static func encode(_ value: CBORValue) -> [UInt8] {
        switch value {
        case .unsigned(let n): return head(0, n)
        case .negative(let n): return head(1, n)
        case .bytes(let b): return head(2, UInt64(b.count)) + b
        case .text(let t): return head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap(encode)
        case .map(let entries):
            return head(5, UInt64(entries.count)) + entries.flatMap { encode($0.key) + encode($0.value) }
        }
    }

    /// A head of major type `major` with argument `n`, shortest form.
    static func head(_ major: UInt8, _ n: UInt64) -> [UInt8] {
        let m = major << 5
        switch n {
        case 0..<24: return [m | UInt8(n)]
        case 24...0xFF: return [m | 24, UInt8(n)]
        case 0x100...0xFFFF: return [m | 25] + bigEndian(n, 2)
        case 0x1_0000...0xFFFF_FFFF: return [m | 26] + bigEndian(n, 4)
        default: return [m | 27] + bigEndian(n, 8)
        }
    }

    static func bigEndian(_ n: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: n >> (8 * UInt64($0))) }
    }

    /// A map with text keys, in the order given.
    static func map(_ entries: [(String, CBORValue)]) -> CBORValue {
        .map(entries.map { CBORMapEntry(key: .text($0.0), value: $0.1) })
    }
}
