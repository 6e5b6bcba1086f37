extension XMLReader {
    /// Appends character data with its entity and character references decoded.
    static func appendDecoded(_ run: ArraySlice<UInt8>, to text: inout [UInt8]) throws(Failure) {
        var index = run.startIndex
        while index < run.endIndex {
            let byte = run[index]
            guard byte == UInt8(ascii: "&") else {
                // Copy the run up to the next reference in one step.
                let next = run[index...].firstIndex(of: UInt8(ascii: "&")) ?? run.endIndex
                text.append(contentsOf: run[index..<next])
                index = next
                continue
            }
            // The longest reference accepted is `&#x10FFFF;` (10 bytes) or `&#1114111;`.
            guard let end = run[index..<min(run.endIndex, index + 12)].firstIndex(of: UInt8(ascii: ";")) else {
                throw Failure(reason: "an '&' that starts no reference")
            }
            text.append(contentsOf: try decodeReference(run[(index + 1)..<end]))
            index = end + 1
        }
    }

    /// The UTF-8 bytes of one reference's body (between `&` and `;`).
    static func decodeReference(_ body: ArraySlice<UInt8>) throws(Failure) -> [UInt8] {
        switch String(decoding: body, as: UTF8.self) {
        case "amp": return [UInt8(ascii: "&")]
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default: break
        }
        guard body.first == UInt8(ascii: "#") else { throw Failure(reason: "an unknown entity") }
        var digits = body.dropFirst()
        var radix: UInt32 = 10
        if digits.first == UInt8(ascii: "x") {
            radix = 16
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 7 else { throw Failure(reason: "a malformed character reference") }
        var value: UInt32 = 0
        for digit in digits {
            let d: UInt32
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: d = UInt32(digit - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: d = UInt32(digit - UInt8(ascii: "A")) + 10
            default: throw Failure(reason: "a malformed character reference")
            }
            value = value * radix + d // at most 7 digits: below 2^28, no overflow
        }
        // XML's Char production: tab, newline, carriage return, and the rest from 0x20, not surrogates.
        guard value == 0x9 || value == 0xA || value == 0xD || (value >= 0x20 && value <= 0x10FFFF),
              let scalar = Unicode.Scalar(value)
        else { throw Failure(reason: "a character reference to no valid character") }
        return Array(String(Character(scalar)).utf8)
    }
}
