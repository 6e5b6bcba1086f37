/// scrypt parameters for passphrase-sealed containers, and the limits a reader enforces.
public struct ScryptParameters: Sendable, Equatable {
    /// Bytes of scrypt salt.
    public static let saltLength = 16
    /// The writer's default: N = 2^17, r = 8, p = 1 (128 MiB, a fraction of a second).
    public static func standard(salt: [UInt8]) -> ScryptParameters {
        ScryptParameters(logN: 17, r: 8, p: 1, salt: salt)
    }

    /// log2 of the CPU/memory cost N.
    public var logN: UInt8
    /// The block size.
    public var r: UInt32
    /// The parallelism.
    public var p: UInt32
    /// The scrypt salt.
    public var salt: [UInt8]

    /// Creates parameters.
    public init(logN: UInt8, r: UInt32, p: UInt32, salt: [UInt8]) {
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = salt
    }

    /// Memory scrypt needs: 128 · r · N bytes.
    public var memoryBytes: UInt64 { 128 * UInt64(r) << UInt64(logN) }

    /// Checks the limits every reader enforces before deriving (docs/FORMAT.md, "MUST reject").
    ///
    /// logN 10...20, r 1...32, p 1...4, memory at most 256 MiB; anything else is refused so that a
    /// hostile header cannot make a reader spend unbounded time or memory.
    public func checkLimits() throws {
        guard (10...20).contains(logN) else { throw ContainerError.costLimitExceeded("logN \(logN) not in 10...20") }
        guard (1...32).contains(r) else { throw ContainerError.costLimitExceeded("r \(r) not in 1...32") }
        guard (1...4).contains(p) else { throw ContainerError.costLimitExceeded("p \(p) not in 1...4") }
        guard memoryBytes <= 256 << 20 else {
            throw ContainerError.costLimitExceeded("needs \(memoryBytes >> 20) MiB, limit 256 MiB")
        }
    }
}
