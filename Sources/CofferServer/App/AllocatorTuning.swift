import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the server's memory at what it uses without paying for it in page faults, on glibc.
///
/// - Blocks of ``mmapThreshold`` (4 MiB) and more — an S3 upload's 8 MiB parts — are always mapped
///   on their own and returned to the system when freed. By default glibc raises its mmap threshold
///   each time such a block is freed (up to 32 MiB); from then on they come from its arenas, which
///   keep them, and the resident size grows with every thread that once held a part.
/// - Free memory at the top of an arena is returned only beyond ``trimThreshold`` (64 MiB). Fixing
///   the mmap threshold would otherwise leave the trim threshold at 128 KiB, and a streamed
///   download's 1 MiB buffers would be returned and faulted in again for every write.
///
/// Measured with `bench/blobs-s3.sh --runs 5` (release build, Ceph gateway on loopback): peak RSS
/// after a 1 GiB upload 116–132 MiB with glibc's defaults, 85–87 MiB with both settings; streamed
/// downloads 0.71x direct with the mmap threshold alone, 0.87x with both (docs/BENCHMARKS.md).
/// `MALLOC_MMAP_THRESHOLD_` or `MALLOC_TRIM_THRESHOLD_` in the environment, glibc's own settings,
/// leave both alone.
enum AllocatorTuning {
    /// The fixed mmap threshold: above every buffer of the download path (1 MiB), below a part.
    static let mmapThreshold: Int32 = 4 << 20
    /// Free memory an arena keeps at its top before returning it.
    static let trimThreshold: Int32 = 64 << 20

    /// Applies both settings, once, before the server allocates its buffers. Returns whether it did.
    @discardableResult
    static func apply() -> Bool {
        #if canImport(Glibc)
        // `mallopt`, `M_TRIM_THRESHOLD` (-1) and `M_MMAP_THRESHOLD` (-3) are in <malloc.h>, which
        // Swift's Glibc module does not import; a C library without `mallopt` (musl) is left alone.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let environment = ProcessInfo.processInfo.environment
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")
        else { return false }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        return mallopt(-3, mmapThreshold) == 1 && mallopt(-1, trimThreshold) == 1
        #else
        return false
        #endif
    }
}
