import Fluent
import Vapor

/// A wrapped key not stored, or a stored one this server cannot open: the database records another
/// master key than the one this server holds (a rotation replaced it while the server ran). The
/// server stores and delivers no key until it is restarted with the current master key.
struct StaleMasterKey: Error, CustomStringConvertible {
    /// The ID of the master key this server holds.
    let held: String
    /// The ID of the master key the database records, if any.
    let recorded: String?

    var description: String {
        "this server holds master key \(held), but the stored keys are wrapped by master key \(recorded ?? "(none recorded)") "
            + "(rotated since this server started?): restart it with COFFER_MASTER_KEY or DATA_DIR/master.key set to the current key"
    }

    /// The answer to a request that would have stored or delivered a key (without key IDs: they are
    /// the operator's). 503: another instance, or this one restarted, can answer it.
    static let refusal = APIError(.serviceUnavailable, "master_key_rotated",
                                  "the master key was rotated since this server started; it stores and delivers no key until it is restarted with the new master key")

    /// Why `key` could not open a stored key, if the record says: this error when the database
    /// records another master key (a rotation since this server started), nil when it records
    /// `key`, records none or cannot be read (then the stored key itself is at fault). Reads the
    /// record, so call it only once opening failed: the path that succeeds reads nothing more.
    static func explaining(failureOf key: MasterKey, on db: any Database) async -> StaleMasterKey? {
        guard let recorded = try? await CurrentMasterKey.read(on: db), recorded != key.id else { return nil }
        return StaleMasterKey(held: key.id, recorded: recorded)
    }
}
