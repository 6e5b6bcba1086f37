@testable import Coffer
import Foundation
import Testing

/// A client's first access to the fleet's "summer" deployment (classifier-large and stylizer) whose
/// model downloads a proxy holds back: the update is under way, holds the collection's update lock and
/// knows the bytes to come, and gets none of them until ``gate`` opens.
struct HeldDownload {
    let proxy: TamperingProxy
    let gate: Gate
    let client: CofferClient
    let progress: Progress
    /// The bytes the update has to download.
    let total: Int64
    private let result = ResultBox()

    /// Starts the access in `cache` and returns once the update knows its bytes and its first
    /// download is held, so its part file exists (waiting up to 600 s:
    /// on a loaded machine the test process's threads may be busy for long). Call ``finish()`` after.
    init(_ fleet: SDKFleet, cache: URL) async throws {
        proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        let gate = Gate()
        self.gate = gate
        proxy.setRule { method, path, _, _, _ in method == "GET" && path.hasPrefix("/v1/blobs/") ? .hold(gate) : .forward }
        client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        let result = result
        progress = client.beginAccessing(identifier: "FlowerModels") { result.set($0) }
        total = Int64(["classifier-large", "stylizer"].map { fleet.session.cli.read($0 + ".coffer")?.count ?? 0 }.reduce(0, +))
        let deadline = Date().addingTimeInterval(600)
        // The update knows its bytes, and the first model's request is held: its part file exists.
        while progress.totalUnitCount != total || !gate.hasHeld, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
    }

    /// The access's result once it has one (waiting up to 600 s).
    func outcome() async throws -> Result<ModelCollection, any Error>? {
        try await SDKFleet.within(600) { () async -> Result<ModelCollection, any Error>? in
            while result.get() == nil { try? await Task.sleep(nanoseconds: 20_000_000) }
            return result.get()
        }
    }

    /// Lets the downloads go and stops the proxy.
    func finish() {
        gate.open()
        proxy.stop()
    }
}
