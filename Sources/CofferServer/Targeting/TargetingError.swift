/// A rule or attribute that cannot be used; `reason` is one line for the user, naming the clause at fault.
struct TargetingError: Error, Equatable, CustomStringConvertible {
    /// What is wrong, in words, on one line.
    let reason: String

    /// The reason, so that logging or printing the error shows it.
    var description: String { reason }

    /// An error about one clause of a condition: `problem` followed by the clause, quoted and shortened.
    static func inClause(_ problem: String, _ clause: Substring) -> TargetingError {
        TargetingError(reason: "\(problem) in clause \(TargetingText.quoted(clause))")
    }
}
