import ArgumentParser
import CofferFormat
import Foundation

/// `coffer decrypt`: restore a sealed model, or read one of the legacy formats teams use today.
struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Open a Coffer container (or an RNCryptor v3 / CryptoKit-combined file) and restore its file or folder.",
        discussion: """
            Nothing is written unless every byte authenticates: the output is built beside its final \
            path and renamed into place at the end. With --stdout the whole file is authenticated \
            first, then decrypted again as it is written.
            """
    )

    @Argument(help: ArgumentHelp("The sealed file.", valueName: "PATH"))
    var path: String

    @OptionGroup var key: KeyOptions
    @OptionGroup var legacy: LegacyOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to restore (default: PATH without .coffer).", valueName: "OUT"))
    var output: String?

    @Flag(help: "Write the plaintext of a sealed file to standard output instead.")
    var stdout = false

    @Flag(help: "Replace OUT if it exists.")
    var force = false

    @Flag(name: .shortAndLong, help: "No progress bar.")
    var quiet = false

    func validate() throws {
        if stdout && output != nil { throw ValidationError("give --output or --stdout, not both") }
    }

    func run() throws {
        // A container's header is read whole before its key is checked, and its length is the
        // file's word: as `inspect`, a header over the limit the server keeps to is refused from
        // its preamble (`SealedModel.maximumHeaderLength`).
        let format = try legacy.resolvedFormat(of: path)
        guard format == .coffer else {
            if key.keyFile != nil {
                throw ValidationError("\(format.rawValue) files are opened with --passphrase-file or --passphrase-env, not --key")
            }
            let source = try legacy.openSource(
                path, format: format, passphraseFile: key.passphraseFile, passphraseEnv: key.passphraseEnv)
            if stdout { return try StandardOutput.write(source) }
            let destination = output ?? CLIPaths.strippingExtension(path, known: [".rncryptor", ".enc", ".coffer"], otherwise: ".decrypted")
            try LegacyFiles.write(source, to: destination, replacing: force)
            print("Decrypted \(path) (\(format.rawValue)) to \(destination)")
            return
        }
        let material = try key.material()
        if stdout {
            let reader = try SealedModel.Reader(path: path, using: material, maximumHeaderLength: SealedModel.maximumHeaderLength)
            guard reader.header.payloadKind == .file else {
                throw CLIFailure(.usage, "\(path) holds a folder; restore it with --output instead of --stdout")
            }
            try reader.verifyAll()
            try reader.decryptInOrder { try StandardOutput.write($0) }
            return
        }
        let destination = output ?? CLIPaths.strippingExtension(path, known: [".coffer"], otherwise: ".decrypted")
        let size = (try? PositionalFile(readingAt: path).size()) ?? 0
        let bar = ProgressBar.make(total: size, label: "opening", quiet: quiet)
        let header = try SealedModel.open(contentsOf: path, to: destination, using: material, replacing: force, progress: bar?.1,
                                          maximumHeaderLength: SealedModel.maximumHeaderLength)
        bar?.0.finish()
        let what = header.payloadKind == .directory ? "folder" : "file"
        print("Restored \(what) \(destination) (\(header.plaintextLength) bytes)")
    }
}
