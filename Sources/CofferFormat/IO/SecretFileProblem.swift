#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What makes a file unfit to hold a secret someone hands over (a key, a passphrase, a token): it
/// is not a regular file (nor a pipe, where the reader takes one), it is neither this account's
/// nor root's, or its group or others may read or write it — as ssh treats its keys. Another
/// account's file could hold a secret of its choosing (models sealed for it, model keys wrapped
/// under a master key it knows), and a file others can read has given the secret away already.
///
/// The one rule for the CLI's secret inputs, `coffer-server rotate-master-key --new-key-file` and
/// the master key files `coffer-server` reads (`DATA_DIR/master.key`, `master.key.next`); judged on
/// the `fstat` of the descriptor that is then read (``BoundedFile/read(_:atMost:followingLinks:checking:)``),
/// so the file judged is the file read.
package enum SecretFileProblem: Equatable, Sendable {
    /// Not a regular file (nor a pipe, where pipes are allowed).
    case notRegular
    /// Neither this account's nor root's.
    case notYours
    /// Its group or others may read or write it; `mode` in octal, as `ls` shows it.
    case open(mode: String)

    /// The problem of the file `info` describes (its `fstat`), nil when it may hold a secret.
    package static func of(_ info: stat, allowingPipes: Bool = false) -> SecretFileProblem? {
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || (allowingPipes && type == S_IFIFO) else { return .notRegular }
        guard info.st_uid == geteuid() || info.st_uid == 0 else { return .notYours }
        guard info.st_mode & 0o077 == 0 else { return .open(mode: String(info.st_mode & 0o777, radix: 8)) }
        return nil
    }

    /// The refusal in one line, naming the file (`what`: "passphrase file", say) and the fix; never
    /// its contents.
    package func line(_ what: String, _ path: String) -> String {
        switch self {
        case .notRegular: return "\(what) \(path) is not a regular file"
        case .notYours: return "\(what) \(path) belongs to another user; use a file of your own (chown it to this account, chmod 600)"
        case .open(let mode): return "\(what) \(path) may be read or written by others (mode \(mode)); chmod 600 it"
        }
    }
}
