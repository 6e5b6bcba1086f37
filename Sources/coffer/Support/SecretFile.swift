import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold a secret the CLI is given (passphrase, model key, RNCryptor keys, API token,
/// app credential, invitation code, device key): read with a hard cap, and only when the file
/// opened is this user's (or root's) and nobody else may read or write it — as ssh treats its
/// keys and ``Credentials/load(_:)`` the saved credentials. Another account's file could hold a
/// key or passphrase of its choosing (models sealed for it), and a file others can read has
/// already given the secret away.
///
/// The checks are made on the descriptor that is read (`fstat`), so the file checked is the file read.
enum SecretFile {
    /// The first `limit` bytes of the secret file at `path` (`-`: standard input, when
    /// `standardInput`), after ``check(_:_:what:allowingPipes:)``. A pipe (`<(...)`, a FIFO) is
    /// taken when `allowingPipes`; with `followingLinks` false, a symbolic link at `path` is refused.
    ///
    /// - Throws: ``CLIFailure`` when the check refuses the file; ``IOFailure`` when it cannot be opened or read.
    static func read(_ path: String, atMost limit: Int, what: String, allowingPipes: Bool = true,
                     followingLinks: Bool = true, standardInput: Bool = false) throws -> [UInt8] {
        if standardInput, path == "-" { return try BoundedFile.read(fileOrStandardInput: path, atMost: limit) }
        do {
            return try BoundedFile.read(path, atMost: limit, followingLinks: followingLinks) {
                try check(path, $0, what: what, allowingPipes: allowingPipes)
            }
        } catch let failure as IOFailure where !followingLinks && failure.operation == .open && failure.code == ELOOP {
            throw CLIFailure(.noInput, "\(what) \(path) is a symbolic link; give the file itself")
        }
    }

    /// Refuses a secret file (`info`: its `fstat`) that is not a regular file (nor a pipe, when
    /// `allowingPipes`), is neither this user's nor root's, or that its group or others may read or
    /// write (``SecretFileProblem``, the rule `coffer-server rotate-master-key` holds its key file to).
    static func check(_ path: String, _ info: stat, what: String, allowingPipes: Bool) throws {
        guard let problem = SecretFileProblem.of(info, allowingPipes: allowingPipes) else { return }
        throw CLIFailure(problem == .notRegular ? .noInput : .permission, problem.line(what, path))
    }
}
