import Foundation

/// The reverse proxies and load balancers whose `X-Forwarded-For` the server believes
/// (COFFER_TRUSTED_PROXIES), and how a request's client address is found through them.
///
/// Without trusted proxies the client is the connection's peer and `X-Forwarded-For` is ignored:
/// anybody can write that header. With them, the header is read from the right, the end the
/// proxies append to, past every trusted proxy; the first address that is not one is the client's.
/// An address written by the client itself is therefore never believed, however it is spelled.
struct TrustedProxies: Sendable, Equatable {
    /// Each a single address or a CIDR range.
    let ranges: [IPRange]

    /// Entries of `X-Forwarded-For` read at most (right to left); a longer chain is cut there.
    static let maximumHops = 32

    static let none = TrustedProxies(ranges: [])

    init(ranges: [IPRange]) { self.ranges = ranges }

    /// Reads a comma- or space-separated list such as `10.0.0.0/8, 192.168.1.7, fd00::/8`.
    init(parsing text: String) throws(Invalid) {
        let items = text.split { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\n" }
        var ranges: [IPRange] = []
        for item in items {
            guard let range = IPRange(item) else { throw Invalid(item: String(item.prefix(60))) }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    /// A list entry that is neither an address nor a CIDR range.
    struct Invalid: Error, CustomStringConvertible {
        let item: String
        var description: String {
            "COFFER_TRUSTED_PROXIES: \"\(item)\" is not an IP address or a CIDR range such as 10.0.0.0/8"
        }
    }

    func trusts(_ address: [UInt8]) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client's address for a connection from `peer` that carried `forwardedFor` (every
    /// `X-Forwarded-For` value, in order, read only when the peer is a trusted proxy); nil when the
    /// peer is unknown.
    func client(peer: String?, forwardedFor: @autoclosure () -> [String]) -> String? {
        // With no proxy trusted (the usual set-up), nothing is parsed: the peer is the client.
        guard let peer, !ranges.isEmpty, let peerBytes = IPRange.address(peer), trusts(peerBytes) else { return peer }
        var client = peer
        var hops = 0
        for value in forwardedFor().reversed() {
            for entry in value.split(separator: ",").reversed() {
                hops += 1
                let text = entry.trimmingCharacters(in: .whitespaces)
                // Garbage appended by a trusted proxy ends the walk at the last address known.
                guard hops <= Self.maximumHops, let bytes = IPRange.address(text) else { return client }
                client = String(text)
                if !trusts(bytes) { return client }
            }
        }
        return client
    }
}
