import ArgumentParser
import CofferFormat
import Foundation

/// `coffer migrate`: re-seal a legacy file into a Coffer container without writing plaintext to disk.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Re-seal an RNCryptor v3 or CryptoKit-combined file as a Coffer container.",
        discussion: """
            The old file is authenticated first; its plaintext then streams straight into the new \
            container and never touches the disk.
            """
    )

    @Argument(help: ArgumentHelp("The legacy file.", valueName: "OLD"))
    var path: String

    @OptionGroup var legacy: LegacyOptions

    @Option(help: ArgumentHelp("The old file's passphrase, from a file.", valueName: "FILE"))
    var passphraseFile: String?

    @Option(help: ArgumentHelp("The old file's passphrase, from an environment variable.", valueName: "VAR"))
    var passphraseEnv: String?

    @Option(name: .customLong("key"), help: ArgumentHelp("Seal with this model key.", valueName: "FILE.modelkey"))
    var keyFile: String?

    @Option(help: ArgumentHelp("Seal with the passphrase in this file.", valueName: "FILE"))
    var newPassphraseFile: String?

    @Option(help: ArgumentHelp("Seal with the passphrase in this environment variable.", valueName: "VAR"))
    var newPassphraseEnv: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write (default: OLD without .enc/.rncryptor, plus .coffer).", valueName: "OUT"))
    var output: String?

    @Flag(help: "Replace OUT if it exists.")
    var force = false

    func run() throws {
        let newKey: KeyMaterial
        switch (keyFile, newPassphraseFile, newPassphraseEnv) {
        case (let file?, nil, nil):
            newKey = .modelKey(try KeyFiles.read(file))
        case (nil, .some, nil), (nil, nil, .some):
            newKey = .passphrase(try Passphrases.read(file: newPassphraseFile, environment: newPassphraseEnv))
        default:
            throw ValidationError("give exactly one of --key FILE.modelkey, --new-passphrase-file FILE, --new-passphrase-env VAR")
        }
        let format = try legacy.resolvedFormat(of: path)
        guard format != .coffer else {
            throw CLIFailure(.usage, "\(path) is already a Coffer container")
        }
        let source = try legacy.openSource(path, format: format, passphraseFile: passphraseFile, passphraseEnv: passphraseEnv)
        let base = CLIPaths.strippingExtension(path, known: [".rncryptor", ".enc"], otherwise: "")
        let destination = output ?? base + ".coffer"
        let name = URL(fileURLWithPath: base).lastPathComponent
        let out = try AtomicOutput(finalPath: destination, replacing: force)
        let file = try out.createFile(mode: 0o644)
        let header = try SealedModel.seal(source, kind: .file, name: name, using: newKey, to: file)
        try file.synchronize()
        try out.commit()
        print("Migrated \(path) (\(format.rawValue)) to \(destination) (\(header.plaintextLength) bytes)")
    }
}
