import Foundation

/// A conservative estimate of the entropy in a secret an operator chose (COFFER_BOOTSTRAP_TOKEN).
///
/// The estimate is the smallest of three figures, so that a value weak in any one way is weak:
/// - the characters that do not merely repeat or step from the one before (`aaaa`, `abcd`, `1234`
///   count as one), times log2 of the alphabet of the character classes present (lower case 26,
///   upper case 26, digits 10, anything else 33);
/// - the shortest unit the value repeats (`abcabcabc` counts as `abc`), times the same log2;
/// - the value's length times the Shannon entropy of its own character frequencies (`a…a1234`
///   is mostly one character).
///
/// A random token passes easily: `Secrets.make(prefix:)`'s 43 base64url characters estimate at
/// about 230 bits, 64 hex digits (`openssl rand -hex 32`) at about 240. Exactly 128 random bits
/// written in hex (32 digits) may estimate below 128 and be refused: the estimate errs low.
enum SecretStrength {
    /// The bits an operator-chosen secret must have.
    static let minimumBits = 128.0

    /// The estimated entropy of `secret`, in bits (0 for an empty one).
    static func estimatedBits(_ secret: String) -> Double {
        let scalars = Array(secret.unicodeScalars)
        guard !scalars.isEmpty else { return 0 }
        let perCharacter = log2(alphabetSize(scalars))
        let changes = 1 + zip(scalars, scalars.dropFirst()).filter { previous, next in
            let difference = Int64(next.value) - Int64(previous.value)
            return difference.magnitude > 1
        }.count
        return min(Double(changes) * perCharacter, Double(period(scalars)) * perCharacter,
                   Double(scalars.count) * shannonBits(scalars))
    }

    /// The sizes of the character classes present, added up.
    static func alphabetSize(_ scalars: [Unicode.Scalar]) -> Double {
        var lower = false, upper = false, digit = false, other = false
        for scalar in scalars {
            switch scalar {
            case "a"..."z": lower = true
            case "A"..."Z": upper = true
            case "0"..."9": digit = true
            default: other = true
            }
        }
        return (lower ? 26 : 0) + (upper ? 26 : 0) + (digit ? 10 : 0) + (other ? 33 : 0)
    }

    /// The length of the shortest unit that `scalars` repeats (the whole length when none does),
    /// from the prefix function (Knuth–Morris–Pratt), in one pass.
    static func period(_ scalars: [Unicode.Scalar]) -> Int {
        var border = [Int](repeating: 0, count: scalars.count)
        for index in scalars.indices.dropFirst() {
            var length = border[index - 1]
            while length > 0, scalars[index] != scalars[length] { length = border[length - 1] }
            if scalars[index] == scalars[length] { length += 1 }
            border[index] = length
        }
        return scalars.count - border[scalars.count - 1]
    }

    /// The Shannon entropy of the value's own character frequencies, in bits per character.
    static func shannonBits(_ scalars: [Unicode.Scalar]) -> Double {
        var counts: [Unicode.Scalar: Int] = [:]
        for scalar in scalars { counts[scalar, default: 0] += 1 }
        let total = Double(scalars.count)
        return counts.values.reduce(0) { bits, count in
            let p = Double(count) / total
            return bits - p * log2(p)
        }
    }
}
