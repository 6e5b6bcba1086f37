/// The cost of deriving the key-encryption key from a passphrase with scrypt (RFC 7914).
///
/// The parameters and a random salt are stored in the database, so a store can be opened with the
/// parameters it was created with.
public struct ScryptParameters: Sendable, Equatable {
    /// log2 of the CPU/memory cost N.
    public var logN: UInt8
    /// The block size r.
    public var r: UInt32
    /// The parallelism p.
    public var p: UInt32

    /// N = 2^logN, r and p as given.
    public init(logN: UInt8, r: UInt32 = 8, p: UInt32 = 1) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// N = 2^15, r = 8, p = 1: 32 MiB and about 0.1 s on a current phone or laptop core.
    public static let `default` = ScryptParameters(logN: 15)

    /// The most memory scrypt may need: 256 MiB, the same limit CofferFormat's readers enforce on
    /// passphrase containers (`CofferFormat.ScryptParameters.checkLimits()`, docs/FORMAT.md).
    static let maximumMemoryBytes: UInt64 = 256 << 20

    /// Memory scrypt needs, 128 · r · N bytes (its V array), or nil when that does not fit in 64 bits.
    ///
    /// Computed with overflow checks: the values come from a database file that may be hostile.
    var memoryBytes: UInt64? {
        guard logN < 64 else { return nil }
        let perBlock = 128 * UInt64(r)  // at most 2^39: cannot overflow
        let (product, overflow) = perBlock.multipliedReportingOverflow(by: 1 << UInt64(logN))
        return overflow ? nil : product
    }

    /// Checks the parameters before anything is derived, so that a damaged or hostile database file
    /// cannot make opening take hours or gigabytes: memory (128 · r · N) at most 256 MiB, then
    /// logN 1...22, r 1...32, p 1...16.
    ///
    /// - Throws: ``SealedFieldsError/scryptCostTooHigh`` when the memory is over the limit,
    ///   ``SealedFieldsError/corruptKeyTables`` when a value is out of its range.
    func checkLimits() throws(SealedFieldsError) {
        guard let memory = memoryBytes, memory <= Self.maximumMemoryBytes else { throw .scryptCostTooHigh }
        guard (1...22).contains(logN), (1...32).contains(r), (1...16).contains(p) else { throw .corruptKeyTables }
    }
}
