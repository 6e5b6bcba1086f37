import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The data folder (COFFER_DATA_DIR): the master key, the bootstrap token and the SQLite database.
enum DataFolder {
    /// Creates the folder (mode 0700) when there is none, else checks the one there
    /// (``check(_:)``): it must be a folder of this account (or of root) that no other account may
    /// write into. Whoever can write into it could have put a master key of their own there before
    /// the first start (every model key would then be wrapped under a key they know) or swap the
    /// database.
    /// - Throws: ``ServerSetupError``, one line naming the folder.
    static func prepare(_ path: String) throws {
        if try !check(path) {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// Whether a folder is at `path` that ``prepare(_:)`` would use (true) or nothing is there,
    /// so that it would make one (false); changes nothing (`coffer-server check` asks it too).
    /// - Throws: ``ServerSetupError``, the line `prepare` stops the start with: not a folder,
    ///   another account's (root excepted), or one other accounts may write into.
    static func check(_ path: String) throws -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            guard code == ENOENT else { throw ServerSetupError("cannot use the data folder \(path): \(String(cString: strerror(code)))") }
            return false
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw ServerSetupError("the data folder \(path) is not a folder") }
        guard status.st_uid == geteuid() || status.st_uid == 0 else {
            throw ServerSetupError("the data folder \(path) belongs to another account (uid \(status.st_uid)): use a folder of this account")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw ServerSetupError("other accounts can write into the data folder \(path) (mode \(String(status.st_mode & 0o777, radix: 8))): chmod go-w it")
        }
        return true
    }
}
