/// Why a folder could not be packed: it holds something the packed tree format cannot carry.
///
/// I/O failures (unreadable folders, files that vanish) are reported as `IOFailure` instead.
public struct PackingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or folder concerned, as given on disk.
    public let path: String
    /// What is wrong with it.
    public let reason: String

    /// Creates a refusal for `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// One line: the path and the reason.
    public var description: String { "cannot pack \(path): \(reason)" }
}
