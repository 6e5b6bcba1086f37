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
        let mmapThreshold: Int32 = -3, trimThreshold: Int32 = -1, arenaMax: Int32 = -8
        _ = mallopt(mmapThreshold, 8 << 20)
        // Freed chunk buffers go back to the system beyond 4 MiB of slack per arena, and two arenas
        // serve the worker threads: peak RSS stays flat whatever the input size.
        _ = mallopt(trimThreshold, 4 << 20)
        _ = mallopt(arenaMax, 2)
    }
}
#else
enum ProcessTuning {
    static func apply() {}
}
#endif
