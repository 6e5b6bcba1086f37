import CofferFormat
import Foundation
import Testing

/// Devices of the Flowers app for rollout tests: they fetch verified manifests and report
/// outcomes through the real routes.
struct Fleet {
    let flowers: Flowers
    let devices: [String]

    init(_ flowers: Flowers, size: Int = 40) {
        self.flowers = flowers
        self.devices = (0..<size).map { "device-\($0)" }
    }

    /// Each device's verified manifest, asked of the server at `base` (default: the first).
    func manifests(base: URL? = nil) async throws -> [String: Manifest] {
        let key = try await flowers.signingKey()
        var result: [String: Manifest] = [:]
        for device in devices {
            let reply = try await flowers.manifest(["deviceID": device], base: base)
            #expect(reply.status == 200, "\(reply.text)")
            result[device] = try SignedManifest.verify(reply.body, using: key)
        }
        return result
    }

    /// The devices' manifests from `base` once `condition` holds for all of them (an instance that did
    /// not make a change sees it within its cache's freshness, a second), or after `seconds`.
    func manifests(base: URL, within seconds: Double, until condition: (Manifest) -> Bool) async throws -> [String: Manifest] {
        let deadline = Date().addingTimeInterval(seconds)
        var manifests = try await self.manifests(base: base)
        while !manifests.values.allSatisfy(condition), Date() < deadline {
            try await Task.sleep(for: .milliseconds(200))
            manifests = try await self.manifests(base: base)
        }
        return manifests
    }

    /// One report event about `model` of `manifest`.
    static func event(_ manifest: Manifest, device: String, model: String = "FlowerClassifier", outcome: String,
                      reason: String? = nil, id: String = UUID().uuidString, at: Date = Date()) -> [String: Any] {
        var event: [String: Any] = [
            "id": id, "deviceID": device, "collection": manifest.collection, "sequence": Int(manifest.sequence),
            "deployment": manifest.deploymentID, "model": model, "sha256": manifest.models[model]?.sha256 ?? "",
            "outcome": outcome, "at": ISO8601DateFormatter().string(from: at),
        ]
        if let reason { event["reason"] = reason }
        return event
    }

    /// Posts a batch of events as the app (or `app`) to `base`.
    func report(_ events: [[String: Any]], app: (id: String, credential: String)? = nil, base: URL? = nil) async throws -> HTTP.Reply {
        let (id, credential) = app ?? flowers.app
        return try await HTTP(base: base ?? flowers.server.base).call(
            "POST", "/v1/device/reports", json: ["events": events],
            headers: ["Authorization": "Basic " + Data("\(id):\(credential)".utf8).base64EncodedString()])
    }

    /// The deployment's status as the API gives it.
    func status(_ deploymentID: String) async throws -> [String: Any] {
        let reply = try await flowers.admin.call("GET", Flowers.base + "/deployments/\(deploymentID)/status")
        #expect(reply.status == 200, "\(reply.text)")
        return reply.object
    }

    /// Waits (at most `seconds`) until `condition` holds for the deployment's status; returns the last status.
    func waitForStatus(_ deploymentID: String, seconds: Double = 30, until condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(seconds)
        var status = try await self.status(deploymentID)
        while !condition(status), Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            status = try await self.status(deploymentID)
        }
        return status
    }

    /// Creates a deployment of fresh models named `name` and returns its ID.
    func deployment(_ name: String) async throws -> String {
        let classifier = try await flowers.upload("classifier-" + name)
        let stylizer = try await flowers.upload("stylizer-" + name)
        let (id, reply) = try await flowers.deployment(name, models: ["FlowerClassifier": classifier, "FlowerStylizer": stylizer])
        #expect(reply.status == 201, "\(reply.text)")
        return try #require(id).lowercased()
    }

    /// Activates `id` with stages.
    func stage(_ id: String, _ options: [String: Any]) async throws -> HTTP.Reply {
        try await flowers.admin.call("POST", Flowers.base + "/deployments/\(id)/activate", json: options)
    }
}
