import Foundation

/// Google's Android attestation status list: the serial numbers of attestation certificates
/// (batch, intermediate and RKP keys) that are revoked or suspended.
///
/// The operator fetches it from `https://android.googleapis.com/attestation/status` and gives it
/// to ``AndroidKeyAttestationVerifier``; this type does no network access. A serial on the list
/// makes attestations and later assertions fail with ``AttestationFailure/Code/revoked``,
/// whatever its status.
public struct AndroidRevocationList: Sendable, Equatable {
    struct Entry: Sendable, Equatable, Decodable {
        let status: String
        let reason: String?
    }

    /// The statuses Google's list uses.
    static let knownStatuses: Set<String> = ["REVOKED", "SUSPENDED"]
    /// The largest list accepted (Google's is well under a megabyte).
    static let maximumSize = 16 * 1024 * 1024

    /// Entries by normalised serial (lowercase hex, no leading zeros).
    let entries: [String: Entry]

    /// A list with no entries: nothing is refused as revoked.
    public static let empty = AndroidRevocationList(entries: [:])

    init(entries: [String: Entry]) {
        self.entries = entries
    }

    /// Parses the status list JSON, `{"entries": {"<serial hex>": {"status": "REVOKED" | "SUSPENDED", "reason": "…"}}}`.
    ///
    /// Serials are normalised to lowercase without leading zeros. Throws
    /// ``AttestationFailure/Code/invalid`` with one line for a list over 16 MiB, text that is not
    /// that JSON, a serial that is not hexadecimal, an unknown status, or two spellings of one serial.
    public init(json: [UInt8]) throws {
        guard json.count <= Self.maximumSize else {
            throw AttestationFailure.invalid("Android revocation list is larger than 16 MiB")
        }
        struct Document: Decodable { let entries: [String: Entry] }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch {
            throw AttestationFailure.invalid("Android revocation list is not status JSON with an entries object")
        }
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(document.entries.count)
        for (serial, entry) in document.entries {
            guard let key = AndroidSerialNumber.normalised(serial) else {
                throw AttestationFailure.invalid("Android revocation list has a serial that is not hexadecimal")
            }
            guard Self.knownStatuses.contains(entry.status) else {
                throw AttestationFailure.invalid("Android revocation list has an unknown status for serial \(key)")
            }
            guard entries.updateValue(entry, forKey: key) == nil else {
                throw AttestationFailure.invalid("Android revocation list lists serial \(key) twice")
            }
        }
        self.entries = entries
    }

    /// The number of listed serials.
    public var count: Int { entries.count }

    /// The status (`REVOKED` or `SUSPENDED`) and reason of serial `hex` (any case, leading zeros
    /// allowed), or nil if it is not listed.
    public func entry(forSerial hex: String) -> (status: String, reason: String?)? {
        guard let key = AndroidSerialNumber.normalised(hex), let entry = entries[key] else { return nil }
        return (entry.status, entry.reason)
    }

    /// Throws ``AttestationFailure/Code/revoked`` naming the first of `serials` that is listed.
    func check(serials: [String]) throws {
        for serial in serials {
            if let entry = entry(forSerial: serial) {
                throw AttestationFailure(
                    .revoked,
                    "Android attestation certificate \(serial) is \(entry.status.lowercased())\(Self.shown(reason: entry.reason))"
                )
            }
        }
    }

    /// ` (REASON)` for a reason that is a short code such as `KEY_COMPROMISE`; nothing otherwise,
    /// so that a failure stays one line whatever the list holds.
    static func shown(reason: String?) -> String {
        guard let reason, !reason.isEmpty, reason.utf8.count <= 64,
            reason.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F })
        else { return "" }
        return " (\(reason))"
    }
}
