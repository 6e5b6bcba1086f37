/// Why a model could not be read. Each case's ``description`` is one line a person can act on.
public enum InspectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is damaged or is not the format its name or magic says: what is wrong, in words.
    case malformed(format: String, reason: String)
    /// The file is larger than a limit allows for the part that must be read into memory.
    case tooLarge(format: String, what: String, size: UInt64, limit: UInt64)
    /// The file or folder could not be read.
    case unreadable(path: String, reason: String)

    /// One line for people.
    public var description: String {
        switch self {
        case .malformed(let format, let reason):
            "damaged \(format): \(reason)"
        case .tooLarge(let format, let what, let size, let limit):
            "\(format): \(what) is \(size) bytes, over the inspection limit of \(limit) bytes"
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        }
    }
}
