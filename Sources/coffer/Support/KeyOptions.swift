import ArgumentParser
import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--key`, `--passphrase-file` or `--passphrase-env`: exactly one says what seals or opens.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key"), help: ArgumentHelp("A model key file.", valueName: "FILE.modelkey"))
    var keyFile: String?

    @Option(help: ArgumentHelp("A file whose content is the passphrase (one final newline is ignored).", valueName: "FILE"))
    var passphraseFile: String?

    @Option(help: ArgumentHelp("An environment variable that holds the passphrase.", valueName: "VAR"))
    var passphraseEnv: String?

    /// Whether any of the three was given.
    var isGiven: Bool { keyFile != nil || passphraseFile != nil || passphraseEnv != nil }

    /// The key material the options name; usage error unless exactly one was given.
    func material() throws -> KeyMaterial {
        let given = [keyFile, passphraseFile, passphraseEnv].compactMap { $0 }.count
        guard given == 1 else {
            throw ValidationError("give exactly one of --key FILE.modelkey, --passphrase-file FILE, --passphrase-env VAR")
        }
        if let keyFile { return .modelKey(try KeyFiles.read(keyFile)) }
        return .passphrase(try Passphrases.read(file: passphraseFile, environment: passphraseEnv))
    }
}

/// Passphrases from a file or the environment; never echoed, never logged.
enum Passphrases {
    static let maximumLength = 4096

    /// The passphrase bytes: a file's content less one final `\n` or `\r\n` (FORMAT.md), or an
    /// environment variable's UTF-8 value. At most `maximumLength + 1` bytes of a file are read, so
    /// a huge file or an endless stream (a device, a pipe that never ends) is refused, never slurped.
    static func read(file: String?, environment: String?) throws -> [UInt8] {
        var bytes: [UInt8]
        if let file {
            do {
                bytes = try BoundedFile.read(file, atMost: maximumLength + 1)
            } catch let failure as IOFailure {
                throw CLIFailure(.noInput, "cannot read passphrase file \(file): \(failure.reason)")
            }
            guard bytes.count <= maximumLength else {
                throw CLIFailure(.usage, "passphrase file \(file) is over \(maximumLength) bytes; is it the right file?")
            }
            if bytes.last == UInt8(ascii: "\n") {
                bytes.removeLast()
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            }
        } else if let environment {
            guard let value = ProcessInfo.processInfo.environment[environment] else {
                throw CLIFailure(.usage, "environment variable \(environment) is not set")
            }
            bytes = Array(value.utf8)
        } else {
            bytes = []
        }
        guard !bytes.isEmpty else { throw CLIFailure(.usage, "the passphrase is empty") }
        return bytes
    }
}

/// `read(2)`, named apart from ``BoundedFile/read(_:atMost:)``.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Small secret files (passphrases, key files) read with a hard cap on the bytes taken.
enum BoundedFile {
    /// The first `limit` bytes of the file at `path` (fewer if it ends sooner), read in order with
    /// plain `read` so pipes (`--passphrase-file <(...)`) work; nothing past `limit` is read.
    ///
    /// - Throws: ``IOFailure`` when the file cannot be opened or read (a folder, for instance).
    static func read(_ path: String, atMost limit: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw IOFailure(operation: .open, path: path, errno: errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, atMost: limit, path: path)
    }

    /// ``read(_:atMost:)``, with `-` for standard input, read from its descriptor (reopening
    /// `/dev/stdin` fails when it is a socket).
    static func read(fileOrStandardInput path: String, atMost limit: Int) throws -> [UInt8] {
        guard path == "-" else { return try read(path, atMost: limit) }
        return try read(descriptor: STDIN_FILENO, atMost: limit, path: "standard input")
    }

    /// The first `limit` bytes readable from `descriptor`.
    private static func read(descriptor: Int32, atMost limit: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        var done = 0
        while done < limit {
            let n = bytes.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress! + done, limit - done) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw IOFailure(operation: .read, path: path, errno: code)
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(limit - done)
        return bytes
    }
}

/// `.modelkey` files: read with a size limit, written 0600 and atomically.
enum KeyFiles {
    static func read(_ path: String) throws -> ModelKey {
        let file = try PositionalFile(readingAt: path)
        guard try file.size() <= UInt64(ModelKey.maximumFileSize) else {
            throw ModelKeyError.malformedFile("\(path) is larger than 64 KiB")
        }
        let bytes = try file.read(count: ModelKey.maximumFileSize, at: 0)
        do {
            return try ModelKey(fileRepresentation: Data(bytes))
        } catch let error as ModelKeyError {
            throw CLIFailure(.noInput, "\(path): \(error.description)")
        }
    }

    static func write(_ key: ModelKey, to path: String, replacing: Bool) throws {
        try AtomicOutput.write(key.fileRepresentation(), to: path, replacing: replacing)
    }
}
