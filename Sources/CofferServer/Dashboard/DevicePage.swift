import CofferFormat
import Vapor

/// "What would this device get": device attributes in (the same names and checks as a device's
/// manifest request, docs/TARGETING.md), the models the active deployment gives it out, with the
/// rule that chose them. It runs the server's own targeting (``CompiledCollection``), so the answer
/// is the one the device would be served. A GET form: it changes nothing.
struct DevicePage: RouteCollection {
    struct Field: Encodable, Sendable {
        let name: String
        let label: String
        let hint: String
        let value: String
    }
    struct Entry: Encodable, Sendable {
        let name: String
        let sha256: String
        let size: String
        let keyID: String
    }
    struct Answer: Encodable, Sendable {
        let target: String
        let deployment: String
        let entries: [Entry]
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let team: String
        let identifier: String
        let collectionPath: String
        let fields: [Field]
        let custom: String
        let error: String?
        let answer: Answer?
        let asked: Bool
    }

    static let fields: [(name: String, label: String, hint: String)] = [
        ("deviceID", "Device ID", "any stable ID; it decides the rollout bucket"),
        ("deviceClass", "Device class", "phone, tablet, desktop, watch, tv, vision or other"),
        ("osName", "Operating system", "e.g. iOS, Android, Linux"),
        ("osVersion", "OS version", "e.g. 17.4"),
        ("appVersion", "App version", "e.g. 2.1.0"),
        ("language", "Language", "e.g. en-US"),
        ("region", "Region", "e.g. US"),
        ("arch", "Architecture", "e.g. arm64"),
        ("memoryGiB", "Memory (GiB)", "e.g. 6"),
    ]

    func boot(routes: any RoutesBuilder) throws {
        routes.get("dashboard", "teams", ":team", "collections", ":collection", "device", use: show)
    }

    func show(req: Request) async throws -> Response {
        let (team, collection) = try await req.collection(requiring: .viewer)
        var query: [String: String] = [:]
        for field in Self.fields {
            if let value = req.query[String.self, at: field.name] { query[field.name] = String(value.prefix(DeviceAttributes.maximumValueLength + 1)) }
        }
        let customText = String((req.query[String.self, at: "custom"] ?? "").prefix(4000))
        let asked = !query.isEmpty
        var error: String?
        var answer: Answer?
        var status = HTTPStatus.ok
        if asked {
            do {
                for line in customText.split(whereSeparator: \.isNewline) where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 2 else { throw DashboardError.invalidForm("Write each custom attribute as name=value on its own line.") }
                    query[TargetingAttribute.customPrefix + parts[0]] = parts[1]
                }
                let device = try DeviceAttributes(query: query)
                answer = try await Self.answer(for: device, collection: collection, on: req)
                if answer == nil { error = "\(collection.identifier) has no active deployment: activate one and devices get its models." }
            } catch let failure as TargetingError {
                error = DashboardErrorMiddleware.sentence(failure.reason)
                status = .badRequest
            } catch DashboardError.invalidForm(let reason) {
                error = reason
                status = .badRequest
            }
        }
        let fields = Self.fields.map { Field(name: $0.name, label: $0.label, hint: $0.hint, value: query[$0.name] ?? "") }
        return try await req.page("device", Page(
            chrome: try Chrome.make(req, title: "What would a device get? · \(collection.identifier)"), team: team.name,
            identifier: collection.identifier, collectionPath: CollectionPages.path(team: team.name, collection: collection.identifier),
            fields: fields, custom: customText, error: error, answer: answer, asked: asked), status: status)
    }

    /// The entries the active deployment gives `device`, as its manifest would list them.
    static func answer(for device: DeviceAttributes, collection: CollectionRecord, on req: Request) async throws -> Answer? {
        guard let compiled = try await CompiledCollection.load(collection, publicURL: nil, on: req.db) else { return nil }
        let variant = compiled.variant(for: device)
        let target = variant.target
        let deployment = compiled.deployment(of: variant)
        let manifest = compiled.manifest(variant, issuedAt: Date(), expiresAt: Date())
        let name = try await DeploymentRecord.find(deployment.deploymentID, on: req.db)?.name ?? ""
        let entries = manifest.models.sorted { $0.key < $1.key }.map {
            Entry(name: $0.key, sha256: String($0.value.sha256.prefix(12)), size: CollectionPage.size($0.value.size), keyID: $0.value.keyID)
        }
        let rule = target == 0 ? "the defaults (no rule matched)" : "rule \(target): \(deployment.rules[target - 1].condition.text)"
        return Answer(target: rule, deployment: name, entries: entries)
    }
}
