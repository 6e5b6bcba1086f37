import ArgumentParser
import Coffer
import CofferFormat
import Foundation

/// `coffer sync`: the SDK's update, once, for Linux devices and edge servers.
struct SyncCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fetch a collection's latest models for this device into a cache folder, verified and still sealed.",
        discussion: """
            Asks the server for the collection's signed manifest as a device with the given \
            attributes (the detected OS, architecture, memory, language and region, overridden by \
            --attr), checks its signature against --public-key, downloads the models it does not \
            have (resuming interrupted downloads, checking each SHA-256) and switches the cache to \
            them in one step. When the server cannot be reached, the cached collection is served \
            and the command still exits 0, saying so on standard error. Models stay sealed; \
            coffer open decrypts one. The credential is read from --credential-file, \
            --credential or COFFER_APP_CREDENTIAL and kept in DIR/keys (0600) for coffer open.

            With --open MODEL --output PATH, that model is also decrypted to PATH (0600, as coffer \
            open writes it); when this sync downloads it, it is decrypted while it downloads and \
            PATH appears only once the whole model matched the manifest's SHA-256.

            Example:
              coffer sync --server https://models.example.com --app APP_ID \\
                --credential-file app.credential --public-key KEY \\
                --collection FlowerModels --cache /var/lib/models --attr deviceClass=embedded
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Also decrypt this model of the collection to --output.", valueName: "MODEL"))
    var open: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Where --open writes the decrypted model.", valueName: "PATH"))
    var output: String?

    @Flag(help: "With --open, replace PATH if it exists.")
    var force = false

    func validate() throws {
        guard (open == nil) == (output == nil) else { throw ValidationError("give --open MODEL and --output PATH together") }
        guard open != nil || !force else { throw ValidationError("--force goes with --open MODEL --output PATH") }
    }

    func run() async throws {
        let secret = try connection.device.resolvedCredential()
        let cacheURL = connection.cacheURL
        var attributes = DeviceAttributes.current
        for (name, value) in try connection.device.deviceAttributes().queryItems { _ = attributes.set(name, to: value) }
        let settings = connection.settings(attributes: Dictionary(attributes.queryItems.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 }))
        var configuration = try settings.configuration(cache: cacheURL, credential: secret)
        configuration.updatePolicy = .waitForLatest
        // An existing PATH is refused (without --force) before anything is downloaded.
        let destination = try output.map { try AtomicOutput(finalPath: $0, replacing: force) }
        let collection: ModelCollection
        do {
            // The configuration is checked (a plain http:// server elsewhere is refused, say)
            // before anything, the credential above all, is saved.
            let client = try CofferClient(configuration: configuration)
            try settings.save(cacheURL, credential: secret)
            if let open, let destination {
                collection = try await Self.syncAndOpen(open, into: destination, client: client, collection: connection.collection)
            } else {
                collection = try await client.beginAccessing(identifier: connection.collection)
            }
        } catch {
            destination?.discard()
            if let error = error as? CofferError { throw CLIFailure(error) }
            throw error
        }
        let report = SyncReport(collection)
        if case .cache(let cause?) = collection.origin {
            guard Self.isUnreachable(cause) else {
                throw CLIFailure(CLIFailure.status(of: cause), "\(cause); the cached collection (sequence \(collection.sequence ?? 0)) is kept")
            }
            Printable.note("\(cause); serving the cached collection (sequence \(collection.sequence ?? 0))")
        }
        if json { print(JSONOutput.render(report)) } else { Printable.say(report.text) }
    }
}

extension SyncCommand {
    /// Syncs and writes `model` into `destination`: decrypted while it downloads when this sync
    /// downloads a file model (into the destination's private temporary file, committed only once
    /// the SDK verified the download), else opened from the cache as `coffer open` does.
    static func syncAndOpen(_ model: String, into destination: AtomicOutput, client: CofferClient, collection identifier: String)
        async throws -> ModelCollection
    {
        let (collection, entry, followed) = try await client.beginAccessing(identifier: identifier, following: model) { _, isFolder in
            isFolder ? nil : try destination.createFile(mode: 0o600)
        }
        if let file = followed as? PositionalFile {
            try file.synchronize()
            try destination.commit()
            return collection
        }
        // Whatever a follow that did not finish wrote is dropped; the cache's copy is decrypted anew.
        destination.discard()
        let fresh = try AtomicOutput(finalPath: destination.finalPath, replacing: destination.replacing)
        let reader = try await entry.reader()
        try entry.checking(reader) { try DecryptedOutput.write(reader, to: fresh) }
        return collection
    }

    /// The server could not be reached or is failing, or the cache keeps its last known good models
    /// after a failure: serving the cache is the expected outcome.
    static func isUnreachable(_ cause: UnavailableCause) -> Bool {
        switch cause {
        case .offline, .lastKnownGood: return true
        case .server(let status, _, _): return status >= 500
        default: return false
        }
    }
}

/// What `coffer sync` prints.
struct SyncReport: Encodable {
    struct Model: Encodable {
        let name: String
        let version: String
        let sha256: String?
        let size: UInt64
        let path: String
    }

    let collection: String
    let deploymentID: String?
    let sequence: UInt64?
    /// Whether the manifest served has expired (``ModelCollection/isExpired``).
    let expired: Bool
    let source: String
    let reason: String?
    let models: [Model]

    init(_ collection: ModelCollection) {
        self.collection = collection.identifier
        deploymentID = collection.deploymentID
        sequence = collection.sequence
        expired = collection.isExpired
        switch collection.origin {
        case .server: (source, reason) = ("server", nil)
        case .cache(let cause): (source, reason) = ("cache", cause?.description)
        case .bundled(let cause): (source, reason) = ("bundled", cause.description)
        }
        models = collection.entries.sorted { $0.key < $1.key }.map {
            Model(name: $0.key, version: $0.value.version, sha256: $0.value.sha256, size: $0.value.size, path: $0.value.modelURL.path)
        }
    }

    var text: String {
        let from = (source == "server" ? "from the server" : "from the cache") + (expired ? "; its manifest has expired" : "")
        var lines = ["Collection \(collection): deployment \(deploymentID ?? "-"), sequence \(sequence.map(String.init) ?? "-") (\(from))"]
        var table = TextTable("NAME", "VERSION", "SHA-256", "SIZE", "PATH")
        for model in models { table.add(model.name, model.version, model.sha256, String(model.size), model.path) }
        lines.append(table.render())
        return lines.joined(separator: "\n")
    }
}
