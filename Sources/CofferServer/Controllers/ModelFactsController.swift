import Fluent
import Foundation
import ModelInspection
import Vapor

/// `PUT /v1/teams/:team/blobs/:sha256/facts`: a developer records what is inside a sealed model the team
/// uploaded (what `coffer inspect --key` shows). The CLI sends it after the upload; the server cannot check
/// it against the sealed bytes (it has no key), so it is the team's own statement, shown to the team only.
/// The body must decode as a ``ModelReport`` and is stored re-encoded, at most ``maximumBytes``.
struct ModelFactsController: RouteCollection {
    static let maximumBytes = 256 * 1024

    func boot(routes: any RoutesBuilder) throws {
        routes.on(.PUT, "v1", "teams", ":team", "blobs", ":sha256", "facts", body: .collect(maxSize: ByteCount(value: Self.maximumBytes)),
                  use: record)
    }

    func record(req: Request) async throws -> HTTPStatus {
        let (team, _) = try await req.team(requiring: .developer)
        let address = try BlobController.address(req)
        guard try await BlobRecord.find(address, on: req.db) != nil else { throw APIError.notFound("blob") }
        guard let body = req.body.data, body.readableBytes <= Self.maximumBytes else {
            throw APIError(.payloadTooLarge, "too_large", "model facts are limited to \(Self.maximumBytes) bytes")
        }
        let report: ModelReport
        do {
            report = try JSONDecoder().decode(ModelReport.self, from: Data(buffer: body))
        } catch {
            throw APIError(.badRequest, "invalid_facts", "the body is not a model report as `coffer inspect --json` writes it under \"model\"")
        }
        guard !report.hasNegativeCounts else {
            throw APIError(.badRequest, "invalid_facts", "the model report has a negative count: not one `coffer inspect` writes")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let canonical = String(decoding: try encoder.encode(report), as: UTF8.self)
        let teamID = try team.requireID()
        if let existing = try await ModelFactsRecord.query(on: req.db).filter(\.$team.$id == teamID).filter(\.$blobID == address).first() {
            existing.facts = canonical
            try await existing.update(on: req.db)
        } else {
            try await ModelFactsRecord(teamID: teamID, blobID: address, facts: canonical).create(on: req.db)
        }
        return .noContent
    }
}
