import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of a command that talks to a Coffer server, with the exit codes those commands add
/// to README.md's table (after sysexits.h).
///
/// `CLIFailure` keeps the codes of the offline commands; these are reported the same way: one line
/// on stderr, unfinished outputs removed, then exit.
struct AdminFailure: Error {
    enum Status: Int32 {
        case usage = 64
        case badData = 65
        case noInput = 66
        case unavailable = 69
        case cannotCreate = 73
        case tryAgain = 75
        case protocolError = 76
        case permission = 77
    }

    let status: Status
    let message: String

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// Commands need a server and a token; neither was given.
    static func notLoggedIn(_ missing: String) -> AdminFailure {
        AdminFailure(.permission, "no \(missing): run coffer login --server URL --token-file FILE, or set COFFER_SERVER and COFFER_TOKEN")
    }

    /// Prints the message and exits with the status. Any unfinished output is removed first.
    func report() -> Never {
        AtomicOutput.discardAllPending()
        let line = Array(("coffer: " + Printable.text(message) + "\n").utf8)
        line.withUnsafeBytes { try? Descriptors.writeAll(2, $0, name: "standard error") }
        exit(status.rawValue)
    }
}
