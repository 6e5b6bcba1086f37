import CofferFormat

/// A file that was to hand over a secret, refused before a byte of it was read
/// (``SecretFileProblem``: the rule the CLI holds its secret files to); its description is one
/// line naming the file and the fix, never its contents. `coffer-server` exits with the CLI's code
/// for it: 66 for what is not a file, else 77.
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
}
