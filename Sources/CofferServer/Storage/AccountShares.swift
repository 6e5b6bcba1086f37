import Foundation

/// What each account's uploads in progress hold of something every account shares, and the most one
/// account may hold at once (its share): the bookkeeping of ``UploadMemory`` (bytes of a bucket's
/// upload memory) and ``UploadSlots`` (uploads into a folder). Not locked: its owner locks.
struct AccountShares {
    /// The most one account may hold.
    let share: Int64
    private var heldBy: [UUID: Int64] = [:]

    init(share: Int64) {
        self.share = share
    }

    /// What `account` holds.
    func held(by account: UUID) -> Int64 { heldBy[account, default: 0] }

    /// Whether `account` may take `amount` more within its share.
    func admits(_ amount: Int64, for account: UUID) -> Bool {
        // What an account holds never exceeds the share: the subtraction cannot overflow.
        amount <= share - held(by: account)
    }

    /// Takes `amount` for `account` if its share has room; false, taking nothing, otherwise.
    @discardableResult
    mutating func take(_ amount: Int64, for account: UUID) -> Bool {
        guard admits(amount, for: account) else { return false }
        heldBy[account] = held(by: account) + amount
        return true
    }

    /// Gives back `amount` taken for `account`, never more than it holds (nor less than nothing);
    /// returns what was given back.
    @discardableResult
    mutating func giveBack(_ amount: Int64, for account: UUID) -> Int64 {
        let current = held(by: account)
        let given = min(max(amount, 0), current)
        heldBy[account] = current > given ? current - given : nil
        return given
    }
}
