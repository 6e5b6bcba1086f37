extension TargetingCondition {
    /// The condition written in `text`. The limits (length, control characters, number of clauses)
    /// are checked before anything else; every error names the limit or the clause at fault.
    init(parsing text: String) throws(TargetingError) {
        let limit = Self.maximumLength
        guard TargetingText.length(of: text, upTo: limit) <= limit else {
            throw TargetingError(reason: "the condition is longer than \(limit) characters")
        }
        if let (offset, scalar) = TargetingText.firstForbidden(in: text) {
            throw TargetingError(reason: "the condition contains control character \(TargetingText.codePoint(scalar)) "
                + "at character \(offset + 1); write it on one line without control characters")
        }
        let whole = TargetingText.trimmed(text[...])
        if whole.isEmpty || whole == "*" {
            self = .everyDevice
            return
        }
        let pieces = TargetingText.split(whole, on: ";")
        guard pieces.count <= Self.maximumClauses else {
            throw TargetingError(reason: "the condition has \(pieces.count) clauses; the limit is \(Self.maximumClauses)")
        }
        var clauses: [TargetingClause] = []
        for (index, piece) in pieces.enumerated() {
            let clause = TargetingText.trimmed(piece)
            guard !clause.isEmpty else {
                throw TargetingError(reason: "clause \(index + 1) of the condition is empty (remove the extra ';')")
            }
            guard clause != "*" else {
                throw .inClause("'*' means every device and cannot be combined with other clauses", clause)
            }
            let parsed = try TargetingClause(parsing: clause)
            if case .rollout = parsed, clauses.contains(where: { if case .rollout = $0 { true } else { false } }) {
                throw .inClause("a second rollout clause (only one is allowed)", clause)
            }
            clauses.append(parsed)
        }
        self.init(clauses: clauses)
        guard TargetingText.length(of: self.text, upTo: limit) <= limit else {
            throw TargetingError(reason: "the condition is longer than \(limit) characters once normalised "
                + "(clauses joined by '; ')")
        }
    }
}
