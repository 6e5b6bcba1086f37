import ArgumentParser
import CofferFormat
import Foundation

/// Which format a sealed input is in: detected, or named with `--format`.
enum InputFormat: String, ExpressibleByArgument, CaseIterable {
    case auto
    case coffer
    case rncryptor
    case cryptokitCombined = "cryptokit-combined"
}

/// `--format` and the key-based RNCryptor keys, shared by `decrypt` and `migrate`.
struct LegacyOptions: ParsableArguments {
    @Option(help: "auto (default), coffer, rncryptor or cryptokit-combined.")
    var format: InputFormat = .auto

    @Option(help: ArgumentHelp(
        "For key-based RNCryptor files: a file holding the 32-byte encryption key then the 32-byte HMAC key, as 128 hex digits.",
        valueName: "FILE"))
    var rncryptorKeyFile: String?

    /// The format named, or detected from the file's first bytes: the Coffer magic, then RNCryptor's
    /// version and options bytes; anything else is taken as CryptoKit-combined (which has no magic).
    func resolvedFormat(of path: String) throws -> InputFormat {
        if format != .auto { return format }
        let file = try PositionalFile(readingAt: path)
        let prefix = try file.read(count: max(RNCryptor.detectionPrefixLength, ContainerHeader.magic.count), at: 0)
        if prefix.starts(with: ContainerHeader.magic) { return .coffer }
        if rncryptorKeyFile != nil || RNCryptor.looksLikeRNCryptor(prefix) { return .rncryptor }
        return .cryptokitCombined
    }

    /// Authenticates a legacy file and returns its plaintext.
    func openSource(_ path: String, format: InputFormat, passphraseFile: String?, passphraseEnv: String?) throws -> any PlaintextSource {
        switch format {
        case .rncryptor:
            if let rncryptorKeyFile {
                let keys = try Self.readKeyPair(rncryptorKeyFile)
                return try RNCryptor.openSource(path: path, credentials: .keys(encryption: keys.0, hmac: keys.1))
            }
            let password = try Passphrases.read(file: passphraseFile, environment: passphraseEnv)
            return try RNCryptor.openSource(path: path, credentials: .password(password))
        case .cryptokitCombined:
            let passphrase = try Passphrases.read(file: passphraseFile, environment: passphraseEnv)
            return try CryptoKitCombined.open(path: path, passphrase: passphrase)
        case .auto, .coffer:
            throw ValidationError("not a legacy format: \(format.rawValue)")
        }
    }

    /// The largest RNCryptor key file read: ample for 128 hex digits and any whitespace around them.
    static let maximumKeyFileSize = 4096

    /// Reads 128 hex digits (whitespace ignored) as two 32-byte keys. At most
    /// `maximumKeyFileSize + 1` bytes are read, so a huge file or endless stream is refused; so is
    /// a file of another user, or one others may read or write (``SecretFile``).
    static func readKeyPair(_ path: String) throws -> ([UInt8], [UInt8]) {
        let data: [UInt8]
        do {
            data = try SecretFile.read(path, atMost: maximumKeyFileSize + 1, what: "RNCryptor key file")
        } catch let failure as IOFailure {
            throw CLIFailure(.noInput, "cannot read RNCryptor key file \(path): \(failure.reason)")
        }
        guard data.count <= maximumKeyFileSize else {
            throw CLIFailure(.noInput, "cannot read RNCryptor key file \(path): it is over \(maximumKeyFileSize) bytes")
        }
        let digits = data.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard digits.count == 128, let bytes = Hex.decode(digits) else {
            throw CLIFailure(.usage, "RNCryptor key file \(path) must hold exactly 128 hex digits (encryption key, then HMAC key)")
        }
        return (Array(bytes[..<32]), Array(bytes[32...]))
    }
}

/// Writing legacy formats, and plaintext from them, atomically.
enum LegacyFiles {
    /// Copies an authenticated plaintext to a new file at `destination` (0600), atomically.
    static func write(_ source: some PlaintextSource, to destination: String, replacing: Bool) throws {
        let output = try AtomicOutput(finalPath: destination, replacing: replacing)
        let file = try output.createFile(mode: 0o600)
        try source.copy(to: file)
        try file.synchronize()
        try output.commit()
    }

    /// Encrypts the file at `path` as RNCryptor v3 (password-based) at `destination`, atomically.
    static func writeRNCryptor(from path: String, to destination: String, password: [UInt8], replacing: Bool) throws {
        let source = try FileSource(path: path)
        let output = try AtomicOutput(finalPath: destination, replacing: replacing)
        let file = try output.createFile(mode: 0o644)
        var offset: UInt64 = 0
        try RNCryptor.encrypt(source, password: password) { piece in
            try file.write(piece, at: offset)
            offset += UInt64(piece.count)
        }
        try file.synchronize()
        try output.commit()
    }
}
