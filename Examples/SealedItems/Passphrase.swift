import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a passphrase from an environment variable, or else from the terminal without echo, or else
/// from one line of standard input. Never from the command line, where `ps` shows it.
enum Passphrase {
    static func read(environment name: String, prompt: String) throws -> String {
        if let value = ProcessInfo.processInfo.environment[name], !value.isEmpty { return value }
        if isatty(STDIN_FILENO) != 0 {
            FileHandle.standardError.write(Data(prompt.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
            defer {
                tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                FileHandle.standardError.write(Data("\n".utf8))
            }
            return readLine(strippingNewline: true) ?? ""
        }
        guard let line = readLine(strippingNewline: true) else { throw UsageError("no passphrase on standard input") }
        return line
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
