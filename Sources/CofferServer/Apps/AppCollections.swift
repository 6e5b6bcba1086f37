import Fluent
import Foundation

/// Which collections an app may read (``AppCollectionRecord``): set when the app is registered or
/// updated, by collection identifier, and only ever to collections of the app's own team.
enum AppCollections {
    /// The most collections one app can be bound to.
    static let maximum = 1000

    /// The identifiers of the collections `appID` is bound to, sorted.
    static func identifiers(of appID: UUID, on db: any Database) async throws -> [String] {
        try await AppCollectionRecord.query(on: db).filter(\.$app.$id == appID)
            .join(CollectionRecord.self, on: \AppCollectionRecord.$collection.$id == \CollectionRecord.$id)
            .all()
            .map { try $0.joined(CollectionRecord.self).identifier }
            .sorted()
    }

    /// The identifiers of each app's collections, for a list of apps.
    static func identifiers(of appIDs: [UUID], on db: any Database) async throws -> [UUID: [String]] {
        guard !appIDs.isEmpty else { return [:] }
        let rows = try await AppCollectionRecord.query(on: db).filter(\.$app.$id ~~ appIDs)
            .join(CollectionRecord.self, on: \AppCollectionRecord.$collection.$id == \CollectionRecord.$id)
            .all()
        var result: [UUID: [String]] = [:]
        for row in rows { result[row.$app.id, default: []].append(try row.joined(CollectionRecord.self).identifier) }
        return result.mapValues { $0.sorted() }
    }

    /// The collections of team `teamID` named by `identifiers`; 400 naming the first that the team
    /// does not have (another team's collection is "not found" too: names never cross teams).
    static func resolve(_ identifiers: [String], in teamID: UUID, on db: any Database) async throws -> [CollectionRecord] {
        let wanted = Array(Set(identifiers))
        guard wanted.count <= maximum else { throw APIError.invalid("an app can be bound to at most \(maximum) collections") }
        guard !wanted.isEmpty else { return [] }
        let found = try await CollectionRecord.query(on: db).filter(\.$team.$id == teamID).filter(\.$identifier ~~ wanted).all()
        let known = Set(found.map(\.identifier))
        if let missing = identifiers.first(where: { !known.contains($0) }) {
            throw APIError(.badRequest, "unknown_collection", "the team has no collection \(missing.prefix(100)); create it first or leave it out")
        }
        return found
    }

    /// Makes `collections` exactly the ones `appID` is bound to.
    static func bind(_ appID: UUID, to collections: [CollectionRecord], on db: any Database) async throws {
        let wanted = Set(try collections.map { try $0.requireID() })
        let existing = try await AppCollectionRecord.query(on: db).filter(\.$app.$id == appID).all()
        let have = Set(existing.map(\.$collection.id))
        for row in existing where !wanted.contains(row.$collection.id) { try await row.delete(on: db) }
        for id in wanted.subtracting(have) { try await AppCollectionRecord(appID: appID, collectionID: id).create(on: db) }
    }
}
