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
    /// it). Darwin: `renamex_np(RENAME_EXCL)`. Elsewhere, or on file systems that refuse the
    /// exclusive rename (`EINVAL`, `ENOSYS`, `ENOTSUP`: some network, FUSE and FAT volumes), an
    /// existence check followed by `rename`. That fallback is atomic only against writers that
    /// follow the same rule under the same lock, as the SDK's cache and the CLI's outputs do.
    static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        renameNoReplace(from, to, exclusive: exclusiveRename)
    }

    /// The rule, with the exclusive rename passed in (so the fallback is tested on every platform).
    static func renameNoReplace(_ from: String, _ to: String, exclusive: ((String, String) -> Int32)?) -> Int32 {
        if let exclusive {
            let result = exclusive(from, to)
            if result == 0 || (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP) { return result }
        }
        var info = stat()
        if lstat(to, &info) == 0 {
            errno = EEXIST
            return -1
        }
        return rename(from, to)
    }
}

#if canImport(Darwin)
private let exclusiveRename: (@Sendable (String, String) -> Int32)? = { renamex_np($0, $1, UInt32(RENAME_EXCL)) }
private let exchangingRename: (@Sendable (String, String) -> Int32)? = { renamex_np($0, $1, UInt32(RENAME_SWAP)) }
#else
private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
/// `renameat2` with `flags`, or nil when the C library has none.
private func renameAt2(flags: UInt32) -> (@Sendable (String, String) -> Int32)? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
    let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
    return { renameat2(AT_FDCWD, $0, AT_FDCWD, $1, flags) }
}
private let exclusiveRename = renameAt2(flags: 1 /* RENAME_NOREPLACE */)
private let exchangingRename = renameAt2(flags: 2 /* RENAME_EXCHANGE */)
#endif

extension AtomicOutput {
    /// Exchanges two existing paths in one step (Linux `renameat2(RENAME_EXCHANGE)`, Darwin
    /// `renamex_np(RENAME_SWAP)`); nil where the system has no such call. File systems without
    /// it fail with `EINVAL` or `ENOTSUP`.
    static var exchangeRename: ((String, String) -> Int32)? { exchangingRename }
}
