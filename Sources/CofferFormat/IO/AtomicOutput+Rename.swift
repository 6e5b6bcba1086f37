#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension AtomicOutput {
    /// Renames `from` to `to` only if `to` does not exist, atomically where the system allows.
    ///
    /// Linux: `renameat2(RENAME_NOREPLACE)` (looked up at run time: the C module does not declare
    /// it). Darwin: `renamex_np(RENAME_EXCL)`. Elsewhere, or on file systems without support, an
    /// existence check followed by `rename`.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        #if canImport(Darwin)
        return renamex_np(from, to, UInt32(RENAME_EXCL))
        #else
        if let renameat2 = linuxRenameAt2 {
            let result = renameat2(AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */)
            if result == 0 || (errno != EINVAL && errno != ENOSYS) { return result }
        }
        var info = stat()
        if lstat(to, &info) == 0 {
            errno = EEXIST
            return -1
        }
        return rename(from, to)
        #endif
    }
}

#if !canImport(Darwin)
private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
private let linuxRenameAt2: RenameAt2? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
    return unsafeBitCast(symbol, to: RenameAt2.self)
}()
#endif
