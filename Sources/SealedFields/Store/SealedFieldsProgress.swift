/// How far a table walk (re-encryption or plaintext migration) has gone.
public struct SealedFieldsProgress: Sendable, Equatable {
    /// The table being walked.
    public var table: String
    /// Rows rewritten so far in this run.
    public var rowsDone: Int
    /// Rows that needed work when this run started.
    public var rowsTotal: Int
    /// Whether every row is done. False when the walk was stopped by its progress handler.
    public var isFinished: Bool
}
