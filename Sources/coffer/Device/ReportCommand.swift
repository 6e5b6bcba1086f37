import ArgumentParser
import Coffer
import Foundation

/// `coffer report`: an edge box tells the server what became of a model `coffer sync` fetched,
/// through the SDK's report path (docs/SDK.md, "coffer report").
struct ReportCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Report that a synced model loaded or failed on this device; a failure also falls back to the last known good.",
        discussion: """
            Reads the deployment, manifest sequence and SHA-256 of --model from the cache that \
            coffer sync filled, and sends the report now, waiting for the server's answer, with \
            the reports earlier runs left queued. --failed also switches the cached collection \
            back to the previous complete version it kept (the next coffer open uses it) and makes \
            the cache refuse this model until a newer deployment names another one for it. The \
            reason is cut to 200 bytes without control characters, paths or token-like strings.

            When the server cannot be reached or asks to wait, the report stays queued in \
            DIR/reports and goes with the next coffer report, \
            and the command exits 69 (75 when rate limited); a fallback has happened all the same. \
            A refused report (400, 403, 413, 422) is dropped: exit 65, or 77 for 403.

            Example:
              coffer report --server https://models.example.com --app APP_ID \\
                --credential-file app.credential --public-key KEY --collection FlowerModels \\
                --cache /var/lib/models --device-id edge-17 --model FlowerClassifier --failed "out of memory"
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Option(help: ArgumentHelp("The model's name in the collection.", valueName: "NAME"))
    var model: String

    @Flag(help: "The model loaded and works on this device.")
    var loaded = false

    @Option(help: ArgumentHelp("The model failed on this device, for REASON (at most 200 bytes are sent).", valueName: "REASON"))
    var failed: String?

    func validate() throws {
        guard loaded != (failed != nil) else { throw ValidationError("give --loaded or --failed REASON") }
        if let failed, failed.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("--failed needs a reason, such as \"out of memory\"")
        }
    }

    func run() async throws {
        let secret = try connection.device.resolvedCredential()
        let (cache, collection) = (connection.cache, connection.collection)
        var configuration = try connection.settings(attributes: [:]).configuration(cache: connection.cacheURL, credential: secret)
        configuration.updatePolicy = .cachedOnly
        let client: CofferClient, entry: ModelCollection.Entry, reported: ModelCollection
        do {
            client = try CofferClient(configuration: configuration)
            guard let synced = try client.cachedCollection(identifier: collection) else {
                throw CLIFailure(.noInput, "\(cache) holds no synced collection \(collection); run coffer sync first")
            }
            guard let found = synced.entries[model] else {
                let names = synced.entries.keys.sorted().joined(separator: ", ")
                throw CLIFailure(.noInput, "collection \(collection) has no model \(model) (it has \(names))")
            }
            (entry, reported) = (found, synced)
        } catch let error as CofferError {
            throw CLIFailure(error)
        }
        let what = "\(model) \(loaded ? "loaded" : "failed") (deployment \(reported.deploymentID ?? "-"), sequence \(reported.sequence ?? 0))"
        do {
            try await client.report(failed.map { .failed(reason: $0) } ?? .loaded, for: entry)
            Printable.say("Reported \(what)." + fallbackNote(client))
        } catch {
            if failed != nil {
                // The fallback happened whatever the server did with the report.
                let queued = if case .queued = error { true } else { false }
                Printable.say((queued ? "Queued, not yet reported: " : "Not reported: ") + "\(what)." + fallbackNote(client))
            }
            switch error {
            case .queued(let cause):
                throw CLIFailure(CLIFailure.status(of: cause), "\(error); it goes with the next coffer report from this cache")
            case .refused(let status, _, _):
                throw CLIFailure(status == 403 ? .permission : .badData, error.description)
            case .notReportable:
                throw CLIFailure(.badData, error.description)
            }
        }
    }

    /// What a failure did to the cache, as the rest of a sentence; empty after --loaded.
    private func fallbackNote(_ client: CofferClient) -> String {
        guard failed != nil else { return "" }
        guard let now = try? client.cachedCollection(identifier: connection.collection), let fallback = now.fallback, fallback.modelName == model else {
            return " No previous version is cached to fall back to."
        }
        return " The cache fell back to deployment \(now.deploymentID ?? "-"), sequence \(now.sequence ?? 0), and refuses this "
            + "\(model) until a deployment names another one."
    }
}
