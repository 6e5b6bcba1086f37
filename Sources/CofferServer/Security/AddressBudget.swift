/// The key a client address's budgets are counted under (sign-in attempts, failed credentials,
/// key and report requests per address).
///
/// An IPv4 address is counted as itself. An IPv6 address is counted by its /64 network: a host,
/// or a subscriber of a provider, is given a whole /64 — 2^64 addresses — so counting single IPv6
/// addresses would give every client as many budgets as it cares to use. An IPv4-mapped IPv6
/// address (`::ffff:192.0.2.1`) is counted as its IPv4 address. Anything that is not an address
/// (`unknown`) is counted as the text itself.
enum AddressBudget {
    /// The budget key of `address` (the text ``Request/clientAddress`` gives).
    static func key(_ address: String) -> String {
        // IPv4, the usual case, without parsing: its text has no colon.
        guard address.utf8.contains(UInt8(ascii: ":")), let bytes = IPRange.address(address), bytes.count == 16 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        return IPRange(address + "/64")?.description ?? address
    }
}
