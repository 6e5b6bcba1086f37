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
    /// a huge file or an endless stream (a pipe that never ends) is refused, never slurped; a file
    /// of another user, or one others may read or write, is refused (``SecretFile``).
    static func read(file: String?, environment: String?) throws -> [UInt8] {
        var bytes: [UInt8]
        if let file {
            do {
                bytes = try SecretFile.read(file, atMost: maximumLength + 1, what: "passphrase file")
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

/// `.modelkey` files: read with a size limit, only when they are the user's own and private
/// (``SecretFile``), written 0600 and atomically.
enum KeyFiles {
    static func read(_ path: String) throws -> ModelKey {
        let bytes = try SecretFile.read(path, atMost: ModelKey.maximumFileSize + 1, what: "model key file", allowingPipes: false)
        guard bytes.count <= ModelKey.maximumFileSize else {
            throw ModelKeyError.malformedFile("\(path) is larger than 64 KiB")
        }
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
