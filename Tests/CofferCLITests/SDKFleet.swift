import Coffer
import CofferAsyncHTTPClient
import CofferFormat
import Crypto
import Foundation
import Testing

/// The Flowers team of ``DeploymentTests/Flowers`` seen from devices: the server's pinned key,
/// the plaintext of each sealed model, and SDK configurations against the server or a proxy.
struct SDKFleet {
    /// The SDK's two transports: the hostile-server tests run with each.
    enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case urlSession, asyncHTTPClient
        var testDescription: String { rawValue }
    }

    let flowers: DeploymentTests.Flowers
    let publicKey: String
    /// Plaintext by model file name: classifier, classifier-large, stylizer.
    let plain: [String: Data]

    var session: AdminSession { flowers.session }
    var server: String { session.server.url }

    init?(environment: [String: String] = [:]) async throws {
        guard let flowers = try await DeploymentTests.Flowers(environment: environment) else { return nil }
        self.flowers = flowers
        publicKey = try #require(await DeploymentTests.signingKey(flowers.session.server.url))
        var plain: [String: Data] = [:]
        for name in ["classifier", "classifier-large", "stylizer"] { plain[name] = flowers.session.cli.read(name + ".bin") }
        self.plain = plain
    }

    func finish() { flowers.finish() }

    /// A fresh folder for a device's cache.
    func folder(_ name: String) -> URL { URL(fileURLWithPath: session.cli.path(name), isDirectory: true) }

    /// A configuration for the Flowers app against `server` (default: the real one).
    func configuration(_ cache: URL, server: String? = nil, policy: UpdatePolicy = .waitForLatest,
                       retries: Int = 2, transport: Transport = .urlSession) throws -> CofferConfiguration {
        var configuration = try CofferConfiguration(serverURL: URL(string: server ?? self.server)!, appID: flowers.appID,
                                                    credential: flowers.credential, publicKey: publicKey, cacheDirectory: cache)
        configuration.updatePolicy = policy
        configuration.deviceID = "device-1"
        configuration.retry = RetryPolicy(attempts: retries, initialDelay: 0.05, maximumDelay: 0.2)
        configuration.requestTimeout = 60
        if transport == .asyncHTTPClient { configuration.transport = AsyncHTTPClientTransport(timeout: 60) }
        return configuration
    }

    /// A proxy in front of the server that passes everything on and keeps each manifest answered
    /// with 200, as sent (``recordingManifests(into:)``).
    func manifestRecordingProxy() throws -> (proxy: TamperingProxy, recorded: Recorded) {
        let proxy = try TamperingProxy(upstreamPort: session.server.port)
        let recorded = Recorded()
        proxy.setRule(Self.recordingManifests(into: recorded))
        return (proxy, recorded)
    }

    /// A proxy rule that forwards everything and keeps each manifest answered with 200 in `recorded`.
    static func recordingManifests(into recorded: Recorded) -> TamperingProxy.Rule {
        { _, path, _, status, body in
            if path.contains("/manifest"), status == 200 { recorded.add(body) }
            return .forward
        }
    }

    /// Creates and activates a deployment with `classifier` (a model file name) and the stylizer.
    func deploy(_ name: String, classifier: String) async throws {
        try await session.ok("deployment", "create", "--collection", "FlowerModels", "--name", name,
                       "--model", "FlowerClassifier=\(classifier).coffer", "--model", "FlowerStylizer=stylizer.coffer", "--activate")
    }

    /// Activates an existing deployment again.
    func activate(_ name: String) async throws {
        try await session.ok("deployment", "activate", name, "--collection", "FlowerModels")
    }

    /// `coffer sync` for this fleet's app into `cache` (a folder name in the working folder).
    func sync(_ cache: String, server: String? = nil, environment: [String: String] = [:], json: Bool = false) async throws -> CLI.Result {
        try await session.cli.run(["sync", "--server", server ?? self.server, "--app", flowers.appID, "--credential-file", "app.credential",
                             "--public-key", publicKey, "--collection", "FlowerModels", "--cache", cache, "--device-id", "edge-1"]
                            + (json ? ["--json"] : []), environment: environment)
    }

    /// `coffer report` for this fleet's app from `cache` (a folder name in the working folder), as
    /// device `edge-1` (the device `sync` uses); stopped after `terminateAfter` seconds if given.
    func report(_ cache: String, model: String, _ outcome: [String], server: String? = nil,
                environment: [String: String] = [:], terminateAfter: Double? = nil) async throws -> CLI.Result {
        try await session.cli.run(["report", "--server", server ?? self.server, "--app", flowers.appID, "--credential-file", "app.credential",
                             "--public-key", publicKey, "--collection", "FlowerModels", "--cache", cache, "--device-id", "edge-1",
                             "--model", model] + outcome, environment: environment, terminateAfter: terminateAfter)
    }

    /// `coffer deployment status DEPLOYMENT --json`, asked again until `done` holds or 60 s have
    /// passed (the server writes reports to its database every second); the last answer.
    func status(_ deployment: String, until done: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let status = await AdminSession.object(try session.ok("deployment", "status", deployment, "--collection", "FlowerModels", "--json"))
            if done(status) || Date() > deadline { return status }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
    }

    /// The outcome counts of a deployment status (`downloaded`, `opened`, `loaded`, `failed`).
    static func outcomes(_ status: [String: Any]) -> [String: Int] {
        (status["outcomes"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
    }

    /// The reports queued in `cache`.
    static func queuedReports(_ cache: URL) -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: cache.path + "/reports/queue.json"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [] }
        return object["events"] as? [[String: Any]] ?? []
    }

    /// The SHA-256 of each model named in `cache`'s state file (what the cache serves now), or in
    /// another state file of the collection (`previous/state.json`: its last known good).
    func cachedModels(_ cache: URL, state file: String = "state.json") throws -> [String: String] {
        let state = try #require(FileManager.default.contents(atPath: cache.path + "/collections/FlowerModels/" + file))
        let object = try #require(try JSONSerialization.jsonObject(with: state) as? [String: Any])
        let envelope = try #require(Data(base64Encoded: object["envelope"] as? String ?? ""))
        let outer = try #require(try JSONSerialization.jsonObject(with: envelope) as? [String: Any])
        let payload = try #require(Data(base64Encoded: outer["payload"] as? String ?? ""))
        let manifest = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let models = try #require(manifest["models"] as? [String: [String: Any]])
        return models.compactMapValues { $0["sha256"] as? String }
    }

    /// Names in one of a cached collection's folders.
    static func names(_ cache: URL, _ folder: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: cache.path + "/collections/FlowerModels/" + folder)) ?? [])
    }

    /// `body`'s result, or a failure after `seconds`.
    static func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return try #require(first, "timed out after \(seconds) s")
        }
    }
}

extension ModelCollection.Origin {
    /// Served from the cache because of `cause`'s kind (any reason text).
    func isStale(_ matches: (UnavailableCause) -> Bool) -> Bool {
        if case .cache(let cause?) = self { return matches(cause) }
        return false
    }

    var isOfflineFallback: Bool {
        let cause: UnavailableCause
        switch self {
        case .cache(let stale?): cause = stale
        case .bundled(let reason): cause = reason
        default: return false
        }
        if case .offline = cause { return true }
        return false
    }
}
