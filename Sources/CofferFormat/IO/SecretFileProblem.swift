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
/// so the file judged is the file read. Each refusal's line says a fix that works when followed:
/// root's file read by another account is to be chowned to it, not only made 0600.
package enum SecretFileProblem: Equatable, Sendable {
    /// Not a regular file (nor a pipe, where pipes are allowed).
    case notRegular
    /// Another account's: neither this account's nor root's; also root's, when this account could
    /// not open it (``init(unopenable:account:)``).
    case notYours
    /// Its group or others may read or write it; `mode` in octal, as `ls` shows it.
    case open(mode: String)
    /// Root's, its group or others may read or write it (`mode`), and this account is not root:
    /// `chmod 600` alone would leave it a file this account cannot open.
    case rootsAndOpen(mode: String)
    /// This account's, but its mode (`mode`) does not let this account read it: made under a umask
    /// such as 0477, say. Found only in a file that could not be opened (``init(unopenable:account:)``).
    case unreadable(mode: String)

    /// The problem of the file `info` describes (its `fstat`), nil when it may hold a secret.
    /// `account`: the account that reads it (this process's effective one).
    package static func of(_ info: stat, allowingPipes: Bool = false, account: uid_t = geteuid()) -> SecretFileProblem? {
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || (allowingPipes && type == S_IFIFO) else { return .notRegular }
        guard info.st_uid == account || info.st_uid == 0 else { return .notYours }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            // Root's, read by another account: chmod alone would leave it unopenable there.
            guard info.st_uid == account else { return .rootsAndOpen(mode: mode) }
            return .open(mode: mode)
        }
        return nil
    }

    /// Why `account` could not open the file `info` describes (its `stat`: `open` failed with
    /// `EACCES` or `EPERM`), nil when its owner and mode do not explain it (an access control list,
    /// a security module): another account's, root's included (root could have opened it), is
    /// ``notYours``; this account's own without the owner's read, ``unreadable(mode:)``.
    package init?(unopenable info: stat, account: uid_t = geteuid()) {
        if info.st_uid != account {
            self = .notYours
        } else if info.st_mode & 0o400 == 0 {
            self = .unreadable(mode: String(info.st_mode & 0o777, radix: 8))
        } else {
            return nil
        }
    }

    /// The refusal in one line, naming the file (`what`: "passphrase file", say) and a fix that
    /// works when followed; never its contents.
    package func line(_ what: String, _ path: String) -> String {
        switch self {
        case .notRegular: return "\(what) \(path) is not a regular file"
        case .notYours: return "\(what) \(path) belongs to another user; use a file of your own (chown it to this account, chmod 600)"
        case .open(let mode): return "\(what) \(path) may be read or written by others (mode \(mode)); chmod 600 it"
        case .rootsAndOpen(let mode):
            return "\(what) \(path) belongs to root and may be read or written by others (mode \(mode)); chown it to this account and chmod 600 it"
        case .unreadable(let mode): return "\(what) \(path) cannot be read by this account (mode \(mode)); chmod 600 it"
        }
    }
}
