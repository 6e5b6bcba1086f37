/// A rule's condition: clauses joined by ';', e.g. "deviceClass=tablet; osVersion>=17; osVersion<18; region=US,CA; rollout=10".
///
/// A device matches when every clause holds; `*` or an empty condition has no clauses and matches
/// every device. Two conditions are equal when their normalised texts are equal.
struct TargetingCondition: Sendable, Equatable {
    /// The most characters a condition may have, as written and once normalised.
    static let maximumLength = 1000
    /// The most clauses a condition may have.
    static let maximumClauses = 20

    /// The condition that every device matches, written `*`.
    static let everyDevice = TargetingCondition(clauses: [])

    /// The clauses, in the order written.
    let clauses: [TargetingClause]

    /// The normalised text (clauses joined by "; ", no extra spaces) — what is stored and shown.
    let text: String

    /// The condition made of `clauses`.
    init(clauses: [TargetingClause]) {
        self.clauses = clauses
        text = clauses.isEmpty ? "*" : clauses.map(\.text).joined(separator: "; ")
    }

    /// The rollout percentage in basis points (10 % = 1000), if the condition has a rollout clause.
    var rolloutBasisPoints: Int? {
        for case .rollout(let basisPoints) in clauses { return basisPoints }
        return nil
    }

    /// Whether a device with these attributes and this rollout bucket (0..<10000) matches.
    func matches(_ device: DeviceAttributes, bucket: Int) -> Bool {
        clauses.allSatisfy { $0.matches(device, bucket: bucket) }
    }

    /// Whether both conditions have the same normalised text.
    static func == (lhs: TargetingCondition, rhs: TargetingCondition) -> Bool {
        lhs.text == rhs.text
    }
}
