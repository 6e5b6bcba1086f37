#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An output that appears at its final path in one step, or not at all.
///
/// Work goes to a hidden temporary path in the same folder (so the final rename never crosses a
/// volume); ``commit()`` renames it into place, refusing to replace an existing path unless asked;
/// ``discard()`` removes it. Pending temporary paths are tracked so that a signal handler can remove
/// them (``discardAllPending()``).
public final class AtomicOutput: @unchecked Sendable {
    /// Where the output will appear.
    public let finalPath: String
    /// Where it is built.
    public let temporaryPath: String
    /// Whether an existing file or folder at `finalPath` may be replaced.
    public let replacing: Bool
    private var settled = false

    /// Reserves a temporary path beside `finalPath`; nothing is created yet.
    ///
    /// Throws `IOFailure` with `EEXIST` at once when `finalPath` exists and `replacing` is false,
    /// so no work is wasted on an output that could not land.
    public init(finalPath: String, replacing: Bool) throws {
        var info = stat()
        if !replacing, lstat(finalPath, &info) == 0 {
            throw IOFailure(operation: .create, path: finalPath, errno: EEXIST)
        }
        let suffix = SymmetricKey(size: .bits128).withUnsafeBytes { $0.prefix(4).hexString }
        let (folder, name) = Self.split(finalPath)
        self.finalPath = finalPath
        // Short enough that any name a file system accepts still leaves room (255-byte names).
        self.temporaryPath = folder + "." + Self.truncated(name, toUTF8: 200) + ".~" + suffix
        self.replacing = replacing
        Self.pending.insert(temporaryPath)
    }

    deinit { if !settled { discard() } }

    /// Creates the temporary file (exclusive, `mode`) and returns it open for reading and writing.
    public func createFile(mode: mode_t = 0o600) throws -> PositionalFile {
        let fd = open(temporaryPath, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw IOFailure(operation: .create, path: finalPath, errno: errno)
        }
        return PositionalFile(adopting: fd, path: temporaryPath)
    }

    /// Moves the finished temporary file or folder to `finalPath`.
    public func commit() throws {
        try commit(exchange: Self.exchangeRename, pause: {})
    }

    /// ``commit()`` with the atomic exchange passed in (nil: the fallback) and `pause` called
    /// where a folder being replaced is between its two moves (where tests deliver a "signal").
    func commit(exchange: ((String, String) -> Int32)?, pause: () -> Void) throws {
        if replacing {
            // Under the lock ``discardAllPending()`` takes: a signal's clean-up never runs between
            // the steps of a replacement, and no replacement starts after it ran.
            try Self.pending.settling {
                try Cancellation.check()
                if Self.pending.isTerminating { throw OperationCancelled() }
                try replaceExisting(exchange: exchange, pause: pause)
            }
        } else if Self.renameNoReplace(temporaryPath, finalPath) != 0 {
            throw IOFailure(operation: .create, path: finalPath, errno: errno)
        }
        settled = true
        Self.pending.remove(temporaryPath)
    }

    /// Writes `bytes` to a new file (`mode`) at `path` in one step: written beside it, synced, then
    /// renamed into place; nothing is left behind on failure.
    public static func write(_ bytes: some ContiguousBytes, to path: String, replacing: Bool, mode: mode_t = 0o600) throws {
        let output = try AtomicOutput(finalPath: path, replacing: replacing)
        do {
            let file = try output.createFile(mode: mode)
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            try file.synchronize()
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// Removes whatever was written at the temporary path.
    public func discard() {
        TreeUnpacker.removeTree(temporaryPath)
        settled = true
        Self.pending.remove(temporaryPath)
    }

    /// Replaces a file only with a file and a folder only with a folder: `--force` must never turn
    /// a folder someone pointed at by mistake into a file, or the reverse.
    private func replaceExisting(exchange: ((String, String) -> Int32)?, pause: () -> Void) throws {
        var existing = stat(), produced = stat()
        guard lstat(finalPath, &existing) == 0 else {
            guard Self.renameNoReplace(temporaryPath, finalPath) == 0 else {
                throw IOFailure(operation: .create, path: finalPath, errno: errno)
            }
            return
        }
        let existingIsFolder = (existing.st_mode & S_IFMT) == S_IFDIR
        let producedFolder = lstat(temporaryPath, &produced) == 0 && (produced.st_mode & S_IFMT) == S_IFDIR
        guard existingIsFolder == producedFolder else {
            throw IOFailure(operation: .create, path: finalPath, errno: existingIsFolder ? EISDIR : ENOTDIR)
        }
        guard existingIsFolder else {
            guard rename(temporaryPath, finalPath) == 0 else { throw IOFailure(operation: .rename, path: finalPath, errno: errno) }
            return
        }
        // A folder cannot be renamed over a non-empty folder. The two are exchanged in one step
        // where the system can: the temporary path then holds the old folder, so whenever a signal
        // comes, removing the temporary path (``discardAllPending()``) leaves one whole folder at
        // the final path, the old or the new.
        if let exchange {
            if exchange(temporaryPath, finalPath) == 0 {
                pause()
                TreeUnpacker.removeTree(temporaryPath)
                return
            }
            guard errno == EINVAL || errno == ENOSYS || errno == ENOTSUP || errno == EOPNOTSUPP else {
                throw IOFailure(operation: .rename, path: finalPath, errno: errno)
            }
        }
        // Otherwise the old folder is moved aside first. The aside is recorded to be put back,
        // not removed: a clean-up between the two renames removes the new folder and moves the
        // old one back to its path, never leaving neither.
        let aside = temporaryPath + "-old"
        guard rename(finalPath, aside) == 0 else { throw IOFailure(operation: .rename, path: finalPath, errno: errno) }
        Self.pending.putBack(aside, to: finalPath)
        defer { Self.pending.settled(aside) }
        pause()
        guard rename(temporaryPath, finalPath) == 0 else {
            let code = errno
            _ = Self.renameNoReplace(aside, finalPath)
            throw IOFailure(operation: .rename, path: finalPath, errno: code)
        }
        TreeUnpacker.removeTree(aside)
    }

    /// The longest prefix of `name` of at most `limit` UTF-8 bytes that ends on a character boundary.
    static func truncated(_ name: String, toUTF8 limit: Int) -> String {
        var result = ""
        var count = 0
        for character in name {
            count += character.utf8.count
            guard count <= limit else { break }
            result.append(character)
        }
        return result
    }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }

    /// Removes every temporary output not yet committed or discarded, and puts back a folder a
    /// replacement had moved aside (for signal handlers). Waits for a replacement under way to
    /// end; replacements asked for afterwards fail.
    public static func discardAllPending() {
        discardPending(where: { _ in true }, terminating: true)
    }

    /// ``discardAllPending()`` for the paths `include` accepts; `terminating` refuses later
    /// replacements (tests clean up their own paths without it).
    static func discardPending(where include: (String) -> Bool, terminating: Bool) {
        pending.settling {
            if terminating { pending.terminate() }
            for path in pending.snapshot() where include(path) { TreeUnpacker.removeTree(path) }
            for (aside, final) in pending.putBacks() where include(aside) {
                _ = renameNoReplace(aside, final)
                pending.settled(aside)
            }
        }
    }

    private static let pending = PendingPaths()
}

/// The temporary paths of unsettled outputs and the folders to put back, guarded by a lock; and
/// the lock replacements and the clean-up take in turn (recursive: a test's clean-up runs inside
/// a replacement's pause).
private final class PendingPaths: @unchecked Sendable {
    private var paths = Set<String>()
    private var moved: [String: String] = [:]
    private var terminating = false
    private let lock = NSLock()
    private let settleLock = NSRecursiveLock()
    func insert(_ path: String) { lock.withLock { _ = paths.insert(path) } }
    func remove(_ path: String) { lock.withLock { _ = paths.remove(path) } }
    func snapshot() -> [String] { lock.withLock { Array(paths) } }
    func putBack(_ aside: String, to final: String) { lock.withLock { moved[aside] = final } }
    func settled(_ aside: String) { lock.withLock { _ = moved.removeValue(forKey: aside) } }
    func putBacks() -> [(String, String)] { lock.withLock { moved.map { ($0.key, $0.value) } } }
    func terminate() { lock.withLock { terminating = true } }

    /// `body` under the lock replacements and the clean-up take in turn.
    func settling<T>(_ body: () throws -> T) rethrows -> T {
        settleLock.lock()
        defer { settleLock.unlock() }
        return try body()
    }

    /// Whether the clean-up has run (replacements then fail).
    var isTerminating: Bool { lock.withLock { terminating } }
}
