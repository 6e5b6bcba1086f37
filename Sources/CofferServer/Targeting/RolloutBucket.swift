import Crypto

/// The stable bucket of a device for a deployment's rollout: 0..<10000.
///
/// bucket = UInt64(big-endian first 8 bytes of SHA-256(UTF-8 "coffer rollout v1|" + seed + "|" + deviceID)) % 10000.
/// The same device and seed always give the same bucket, on every server and in every SDK, so
/// raising a rollout from 10 % to 20 % keeps the devices that already had it.
enum RolloutBucket {
    /// The number of buckets; a rollout of P % takes the buckets below P × 100.
    static let count = 10_000

    /// The bucket of `deviceID` for the rollout identified by `seed` (usually the deployment's ID).
    static func bucket(deviceID: String, seed: String) -> Int {
        // Hashed piece by piece: no joined string per manifest request.
        var hasher = SHA256()
        hasher.update(data: prefix)
        var seed = seed, deviceID = deviceID
        seed.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        hasher.update(data: separator)
        deviceID.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        let value = hasher.finalize().prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(value % UInt64(count))
    }

    private static let prefix = Array("coffer rollout v1|".utf8)
    private static let separator = Array("|".utf8)
}
