/// What each key's holders hold of something every key shares, and the most one key may hold at
/// once (its share): the bookkeeping of ``UploadMemory`` (bytes of a bucket's upload memory, by
/// account), ``UploadSlots`` (uploads into a folder, by account) and ``StreamSlots`` (blob bodies
/// streamed, by client address), written once so that the three refuse and give back alike.
///
/// Not locked: its owner locks, in the same step as whatever else it counts (the total of
/// ``UploadMemory`` and ``StreamSlots``), so that a take is checked and made at once. A key that
/// holds nothing has no entry, so keys that come and go (every address that ever downloaded a
/// blob) leave nothing behind.
struct KeyedShares<Key: Hashable> {
    /// The most one key may hold.
    let share: Int64
    private var heldBy: [Key: Int64] = [:]

    /// Shares of at most `share` each, none of them held.
    init(share: Int64) {
        self.share = share
    }

    /// What `key` holds.
    func held(by key: Key) -> Int64 { heldBy[key, default: 0] }

    /// Whether `key` may take `amount` more within its share.
    func admits(_ amount: Int64, for key: Key) -> Bool {
        // What a key holds never exceeds the share: the subtraction cannot overflow.
        amount <= share - held(by: key)
    }

    /// Takes `amount` for `key` if its share has room; false, taking nothing, otherwise.
    @discardableResult
    mutating func take(_ amount: Int64, for key: Key) -> Bool {
        guard admits(amount, for: key) else { return false }
        heldBy[key] = held(by: key) + amount
        return true
    }

    /// Gives back `amount` taken for `key`, never more than it holds (nor less than nothing);
    /// returns what was given back, for an owner that keeps a total beside the shares.
    @discardableResult
    mutating func giveBack(_ amount: Int64, for key: Key) -> Int64 {
        let current = held(by: key)
        let given = min(max(amount, 0), current)
        heldBy[key] = current > given ? current - given : nil
        return given
    }
}

/// Shares are handed between tasks inside their owner's lock (``StreamSlots`` keeps them in a
/// `NIOLockedValueBox`, which asks for a `Sendable` value).
extension KeyedShares: Sendable where Key: Sendable {}
