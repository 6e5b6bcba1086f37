import Foundation

/// A process-wide request to stop sealing or opening, made when the user interrupts the program.
///
/// Long operations check it between chunks and throw ``OperationCancelled``, so they stop writing
/// before their caller removes the unfinished output.
public enum Cancellation {
    private static let flag = Flag()

    /// Asks every running operation to stop at its next chunk.
    public static func request() { flag.set() }

    /// Whether a stop was requested.
    public static var isRequested: Bool { flag.value }

    /// Throws ``OperationCancelled`` if a stop was requested.
    public static func check() throws {
        if isRequested { throw OperationCancelled() }
    }

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false
        var value: Bool { lock.withLock { raised } }
        func set() { lock.withLock { raised = true } }
    }
}

/// An operation stopped because ``Cancellation/request()`` was called; its output was discarded.
public struct OperationCancelled: Error, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    /// One line.
    public var description: String { "interrupted; the unfinished output was removed" }
}
