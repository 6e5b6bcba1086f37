import ArgumentParser
import Coffer
import CofferFormat
import Foundation

/// `coffer open`: decrypt a model `coffer sync` fetched, as the SDK opens it.
struct OpenCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Decrypt a model of a synced collection, fetching its key once as the SDK does.",
        discussion: """
            The model key is fetched from the server on the first open, sealed to this device's \
            key, and kept in DIR/keys (0600); later opens work offline. --output writes the model \
            (0600, atomically, a folder model as a folder); --stdout streams a file model once \
            every chunk of it is authenticated (nothing is written of a damaged one).

            Example:
              coffer open --cache /var/lib/models --collection FlowerModels FlowerClassifier --output /run/model.bin
            """
    )

    @Option(help: ArgumentHelp("The cache folder coffer sync filled.", valueName: "DIR"))
    var cache: String

    @Option(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
    var collection: String

    @Argument(help: ArgumentHelp("The model's name in the collection.", valueName: "MODEL"))
    var model: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the decrypted model.", valueName: "PATH"))
    var output: String?

    @Flag(help: "Write the decrypted model to standard output.")
    var stdout = false

    @Flag(help: "Replace PATH if it exists.")
    var force = false

    func validate() throws {
        guard (output != nil) != stdout else { throw ValidationError("give --output PATH or --stdout") }
    }

    func run() async throws {
        let cacheURL = URL(fileURLWithPath: cache, isDirectory: true)
        let (settings, credential) = try SyncSettings.load(cacheURL, shown: cache)
        var configuration = try settings.configuration(cache: cacheURL, credential: credential)
        configuration.updatePolicy = .cachedOnly
        do {
            let client = try CofferClient(configuration: configuration)
            guard let synced = try client.cachedCollection(identifier: collection) else {
                throw CLIFailure(.noInput, "\(cache) holds no synced collection \(collection); run coffer sync first")
            }
            guard let entry = synced.entries[model] else {
                let names = synced.entries.keys.sorted().joined(separator: ", ")
                throw CLIFailure(.noInput, "collection \(collection) has no model \(model) (it has \(names))")
            }
            let reader = try await entry.reader()
            if stdout {
                guard !reader.isFolder else { throw CLIFailure(.usage, "model \(model) is a folder; write it with --output PATH") }
                // Every chunk authenticated before the first byte goes out: a model damaged past
                // its first chunks must not leave a plaintext prefix wherever stdout goes.
                try entry.verify(reader)
                try reader.stream { try StandardOutput.write($0) }
            } else if let output {
                // A damaged model leaves nothing at PATH, and is marked for the next sync.
                let atomic = try AtomicOutput(finalPath: output, replacing: force)
                try entry.checking(reader) { try DecryptedOutput.write(reader, to: atomic) }
            }
        } catch let error as CofferError {
            throw CLIFailure(error)
        }
    }
}
