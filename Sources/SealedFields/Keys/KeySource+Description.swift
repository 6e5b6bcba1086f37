extension KeySource: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Which kind of key, never the passphrase or the key itself: `print`, string interpolation,
    /// `debugPrint` and `dump` of a ``KeySource`` (in a log line, an assertion message, a crash
    /// report) show only `passphrase(redacted)` or `rawKey(redacted)`.
    public var description: String {
        switch self {
        case .passphrase: return "passphrase(redacted)"
        case .rawKey: return "rawKey(redacted)"
        }
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// No children: a mirror would show the passphrase or the key's bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
}
