#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call on a named file: what was attempted, on which path, and the system's reason.
///
/// It never carries file contents.
public struct IOFailure: Error, Sendable, CustomStringConvertible {
    /// What was being done when the call failed.
    public enum Operation: String, Sendable {
        case open, create, read, write, stat, rename, remove, list, unexpectedEnd
    }

    /// What was being done.
    public let operation: Operation
    /// The file or folder concerned.
    public let path: String
    /// The `errno` value, or 0 when the failure was not a system error (an unexpected end of file).
    public let code: Int32

    /// Creates a failure record.
    public init(operation: Operation, path: String, errno code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// True when the file or folder does not exist.
    public var isMissing: Bool { code == ENOENT || code == ENOTDIR }

    /// True when the file exists already (an output that would be replaced).
    public var alreadyExists: Bool { code == EEXIST || code == ENOTEMPTY }

    /// The system's short explanation of `code`.
    public var reason: String {
        if operation == .unexpectedEnd { return "file ended early (it changed while being read?)" }
        // PositionalFile refuses pipes, devices and sockets with EINVAL (open itself never gives it for our flags).
        if operation == .open && code == EINVAL { return "not a regular file" }
        return String(cString: strerror(code))
    }

    /// One line: the operation, the path and the reason.
    public var description: String { "cannot \(operation.rawValue) \(path): \(reason)" }
}
