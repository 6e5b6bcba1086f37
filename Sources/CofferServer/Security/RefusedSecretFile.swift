import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that was to hand over a secret, refused before a byte of it was read
/// (``SecretFileProblem``: the rule the CLI holds its secret files to); its description is one
/// line naming the file and a fix that works when followed, never its contents. A file this
/// account could not open at all is refused so too when its owner or mode says why
/// (``init(unopenable:what:path:)``). `coffer-server rotate-master-key` exits with the CLI's code
/// for it: 66 for what is not a file, else 77; a start (`serve`, `public-key`) stops with 1, as for
/// any other reason, and `check` reports the line with 78.
package struct RefusedSecretFile: Error, CustomStringConvertible {
    /// What is wrong with the file.
    package let problem: SecretFileProblem
    /// The refusal, one line.
    package let description: String

    /// The refusal of the file at `path` (`what`: "the new master key file", say) for `problem`.
    init(_ problem: SecretFileProblem, what: String, path: String) {
        self.problem = problem
        self.description = problem.line(what, path)
    }

    /// The refusal of the file at `path` whose `fstat` (of the descriptor that is then read) is
    /// `info`, by ``SecretFileProblem/of(_:allowingPipes:account:)``; nil when the rule takes the file.
    init?(_ info: stat, what: String, path: String, allowingPipes: Bool = false) {
        guard let problem = SecretFileProblem.of(info, allowingPipes: allowingPipes) else { return nil }
        self.init(problem, what: what, path: path)
    }

    /// The refusal of the file at `path` that this account could not open (`EACCES`, `EPERM`),
    /// whose `stat` is `info`, by ``SecretFileProblem/init(unopenable:account:)``: another account's
    /// (root's included) is to be chowned to this account, this account's own that its mode does
    /// not let it read (made under a umask such as 0477) to be made 0600. Nil when neither explains it.
    init?(unopenable info: stat, what: String, path: String) {
        guard let problem = SecretFileProblem(unopenable: info) else { return nil }
        self.init(problem, what: what, path: path)
    }
}
