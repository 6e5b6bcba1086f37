import ArgumentParser
import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure the CLI reports as one line on stderr with a documented exit code.
struct CLIFailure: Error {
    /// The exit codes of README.md ("Exit codes"), after sysexits.h.
    enum Status: Int32 {
        case usage = 64
        case badData = 65
        case noInput = 66
        /// The server cannot be reached or failed (5xx).
        case unavailable = 69
        case cannotCreate = 73
        case ioError = 74
        /// The server is rate limiting (429).
        case tryAgain = 75
        /// The server's answer is not what the API describes.
        case protocolError = 76
        /// Not logged in, or the server refused the token or its role (401, 403).
        case permission = 77
        case interrupted = 130
    }

    let status: Status
    let message: String

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// Maps library errors to a status and a message that says what to do; nil for errors the
    /// argument parser reports itself.
    init?(_ error: Error) {
        switch error {
        case let error as ContainerError:
            self.init(.badData, error.description)
        case let error as OperationCancelled:
            self.init(.interrupted, error.description)
        case let error as PackingError:
            self.init(.noInput, error.description)
        case let error as ModelKeyError:
            self.init(.noInput, error.description)
        case let error as IOFailure:
            self.init(Self.status(of: error), Self.message(for: error))
        default:
            return nil
        }
    }

    private static func status(of failure: IOFailure) -> Status {
        switch failure.operation {
        case .open, .stat, .list: return .noInput
        case .create, .rename: return .cannotCreate
        case .read, .write, .remove, .unexpectedEnd: return .ioError
        }
    }

    private static func message(for failure: IOFailure) -> String {
        if failure.operation == .create, failure.alreadyExists {
            return "\(failure.path) already exists; choose another --output or pass --force to replace it"
        }
        if failure.operation == .create, failure.code == EISDIR || failure.code == ENOTDIR {
            let existing = failure.code == EISDIR ? "a folder" : "a file"
            return "\(failure.path) is \(existing); --force replaces a file only with a file and a folder only with a folder"
        }
        return failure.description
    }

    /// Prints the message and exits with the status. Any unfinished output is removed first.
    func report() -> Never {
        AtomicOutput.discardAllPending()
        let line = Array(("coffer: " + Printable.text(message) + "\n").utf8)
        line.withUnsafeBytes { try? Descriptors.writeAll(2, $0, name: "standard error") }
        exit(status.rawValue)
    }
}

/// The failures of commands that talk to a server use the same type and codes.
typealias AdminFailure = CLIFailure

extension CLIFailure {
    /// Commands need a server and a token; neither was given.
    static func notLoggedIn(_ missing: String) -> CLIFailure {
        CLIFailure(.permission, "no \(missing): run coffer login --server URL --token-file FILE, or set COFFER_SERVER and COFFER_TOKEN")
    }
}
