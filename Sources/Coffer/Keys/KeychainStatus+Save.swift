extension KeychainStatus {
    /// How many times ``save(update:add:)`` tries an update and an add before it gives up.
    static let saveRounds = 3

    /// The outcome of saving an item that may or may not exist yet: `update` it, else `add` it.
    ///
    /// An add that finds the item already there (another thread or process added it after the
    /// update found none) is retried as an update, so concurrent first saves do not fail: the last
    /// writer wins, as with any update. After ``saveRounds`` such races the last status is returned.
    static func save(update: () -> Int32, add: () -> Int32) -> KeychainStatus {
        var status = KeychainStatus.notFound
        for _ in 0..<saveRounds {
            status = KeychainStatus(update())
            guard status == .notFound else { return status }
            status = KeychainStatus(add())
            guard status == .duplicate else { return status }
        }
        return status
    }
}
