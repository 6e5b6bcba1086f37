import ArgumentParser
import CofferFormat
import Foundation

/// `coffer encrypt`: seal a model file or folder.
struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Seal a model file or folder into a Coffer container (or an RNCryptor v3 file).",
        discussion: """
            The output is written beside its final path and renamed into place when complete: a \
            failure or Ctrl-C leaves nothing behind, and an existing output is never replaced without --force.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case coffer
        case rncryptor
    }

    @Argument(help: ArgumentHelp("The model file or folder to seal.", valueName: "PATH"))
    var path: String

    @OptionGroup var key: KeyOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write (default: PATH.coffer).", valueName: "OUT"))
    var output: String?

    @Option(help: "coffer (default) or rncryptor (RNCryptor v3, passphrase only, files only, for older readers).")
    var format: Format = .coffer

    @Option(help: ArgumentHelp(
        "Container format: 2 (default: content-defined chunks; versions of a model sealed with one key share chunks, so updates download only what changed) or 1 (fixed chunks under a per-file key; versions share nothing).",
        valueName: "N"))
    var formatVersion: UInt16 = ContainerHeader.currentVersion

    @Option(help: ArgumentHelp("log2 of the chunk size, 16...20, format 1 only (for benchmarks).", visibility: .hidden))
    var chunkSizeExponent: UInt8?

    @Flag(help: "Replace OUT if it exists.")
    var force = false

    @Flag(name: .shortAndLong, help: "No progress bar.")
    var quiet = false

    func validate() throws {
        guard ContainerHeader.supportedVersions.contains(formatVersion) else {
            throw ValidationError("--format-version must be 1 or 2")
        }
        if let chunkSizeExponent {
            guard formatVersion == 1 else { throw ValidationError("--chunk-size-exponent applies to --format-version 1 only") }
            guard ContainerHeader.chunkSizeExponents.contains(chunkSizeExponent) else {
                throw ValidationError("--chunk-size-exponent must be 16...20")
            }
        }
    }

    func run() throws {
        let material = try key.material()
        let input = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        switch format {
        case .coffer:
            let destination = output ?? input + ".coffer"
            let plaintext = try SealedModel.Input(path: input)
            let bar = ProgressBar.make(total: plaintext.source.length, label: "sealing", quiet: quiet)
            var options = SealedModel.Options()
            options.formatVersion = formatVersion
            options.chunkSizeExponent = chunkSizeExponent ?? options.chunkSizeExponent
            let header = try SealedModel.seal(
                plaintext, to: destination, using: material, replacing: force, options: options, progress: bar?.1)
            bar?.0.finish()
            let keyNote = header.keyID.map { "key \($0)" } ?? "passphrase"
            print("Sealed \(input) to \(destination) (\(header.plaintextLength) bytes, \(keyNote), format \(header.version), \(header.chunkCount) chunks)")
        case .rncryptor:
            guard case .passphrase(let passphrase) = material else {
                throw ValidationError("--format rncryptor needs --passphrase-file or --passphrase-env")
            }
            let destination = output ?? input + ".rncryptor"
            try LegacyFiles.writeRNCryptor(from: input, to: destination, password: passphrase, replacing: force)
            print("Wrote RNCryptor v3 file \(destination)")
            // The format fixes its key derivation (PBKDF2-SHA1, 10 000 rounds): said once it is written (a refusal stays one line), on stderr.
            FileHandle.standardError.write(Data(("coffer: warning: RNCryptor v3 derives its key with PBKDF2-SHA1 at 10 000 rounds, "
                + "weak against guessing; use it only for apps that cannot read Coffer's format, with a long random passphrase\n").utf8))
        }
    }
}
