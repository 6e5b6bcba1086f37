#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address, or a CIDR range of them (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`), IPv4 or IPv6.
///
/// Addresses are read by the C library's `inet_pton`, which accepts only the strict forms (no
/// leading zeros, no shortened IPv4, no zone); an IPv4 address never matches an IPv6 range.
struct IPRange: Sendable, Equatable, CustomStringConvertible {
    /// The network's bytes (4 or 16), with the bits past the prefix cleared.
    let network: [UInt8]
    /// How many leading bits must match.
    let prefixLength: Int

    /// Reads `ADDRESS` or `ADDRESS/PREFIX`; nil when it is neither.
    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.address(parts[0]) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(parts[1]), value <= bits
            else { return nil }
            prefix = value
        }
        network = Self.masked(address, prefix)
        prefixLength = prefix
    }

    /// Whether `address` (4 or 16 bytes) is in the range.
    func contains(_ address: [UInt8]) -> Bool {
        address.count == network.count && Self.masked(address, prefixLength) == network
    }

    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        network.withUnsafeBytes { bytes in
            _ = inet_ntop(network.count == 4 ? AF_INET : AF_INET6, bytes.baseAddress, &text, socklen_t(text.count))
        }
        let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefixLength == network.count * 8 ? address : "\(address)/\(prefixLength)"
    }

    /// The bytes of an IPv4 or IPv6 address in text; nil for anything else.
    static func address(_ text: some StringProtocol) -> [UInt8]? {
        // The longest IPv6 text is 45 characters; anything longer is not an address.
        guard !text.isEmpty, text.utf8.count <= 45 else { return nil }
        let string = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, string, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, string, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    private static func masked(_ address: [UInt8], _ prefix: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let kept = min(max(prefix - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}
