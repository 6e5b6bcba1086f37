#if canImport(Glibc)
import Glibc

/// Process-wide settings that make sealing fast on Linux.
enum ProcessTuning {
    /// Raises glibc's mmap threshold so the 1 MiB buffers swift-crypto allocates for every chunk
    /// come from the heap instead of fresh zeroed pages (measured: docs/BENCHMARKS.md).
    static func apply() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mmapThreshold: Int32 = -3, trimThreshold: Int32 = -1
        _ = mallopt(mmapThreshold, 8 << 20)
        _ = mallopt(trimThreshold, 32 << 20)
    }
}
#else
enum ProcessTuning {
    static func apply() {}
}
#endif
