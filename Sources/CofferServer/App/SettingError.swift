/// A setting (a `COFFER_*` variable or a `coffer-server` flag) whose value the server cannot use.
///
/// The server refuses to start on one, before it writes anything: a value silently replaced by a
/// default hides an operator's mistake (`COFFER_PORT=80a` serving on 8080). The description is the
/// one line `coffer-server` prints: the setting's name and what it accepts, never the value given
/// (it may be a secret, such as a database password or the bootstrap token).
public struct SettingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The variable or flag, as the operator wrote it: `COFFER_PORT`, `--port`.
    public let setting: String
    /// What the setting accepts, e.g. "a whole number from 0 to 65535".
    public let accepts: String

    /// A refusal of `setting`, which accepts `accepts`.
    public init(setting: String, accepts: String) {
        self.setting = setting
        self.accepts = accepts
    }

    /// `COFFER_PORT must be a whole number from 0 to 65535`.
    public var description: String { "\(setting) must be \(accepts)" }
}
