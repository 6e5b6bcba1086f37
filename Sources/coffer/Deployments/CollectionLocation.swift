import ArgumentParser
import Foundation

/// A model collection's team and identifier: the path of its API routes.
///
/// Commands take `--team`, and may leave it out when only one of the caller's teams has a collection
/// with that identifier (found with `GET /v1/collections`).
struct CollectionLocation {
    let team: String
    let identifier: String
    /// The collection as the search for its team found it.
    private let found: API.Collection?

    var segments: [String] { ["v1", "teams", team, "collections", identifier] }

    /// The collection `identifier` of `team`, or of the only team of the caller that has one.
    ///
    /// - Throws: exit 66 when none of the caller's teams has it; a usage error naming the teams
    ///   when several have it.
    static func find(_ identifier: String, team: String?, client: APIClient) async throws -> CollectionLocation {
        if let team { return CollectionLocation(team: team, identifier: identifier, found: nil) }
        let matches = try await client.get([API.Collection].self, "v1", "collections").filter { $0.identifier == identifier }
        switch matches.count {
        case 0:
            throw AdminFailure(.noInput, "none of your teams has a collection \(identifier) (coffer collection list shows them)")
        case 1:
            return CollectionLocation(team: matches[0].team, identifier: identifier, found: matches[0])
        default:
            let teams = matches.map(\.team).sorted().joined(separator: ", ")
            throw AdminFailure(.usage, "several of your teams have a collection \(identifier) (\(teams)): pass --team")
        }
    }

    /// The collection: as found, or fetched (which also checks that it exists); `fresh` always fetches.
    func collection(_ client: APIClient, fresh: Bool = false) async throws -> API.Collection {
        if let found, !fresh { return found }
        return try await client.get(API.Collection.self, segments)
    }

    /// A deployment of this collection by its ID (a UUID), else by its name.
    func deployment(_ reference: String, _ client: APIClient) async throws -> API.Deployment {
        if UUID(uuidString: reference) != nil {
            return try await client.get(API.Deployment.self, segments + ["deployments", reference])
        }
        let all = try await client.get([API.Deployment].self, segments + ["deployments"])
        guard let match = all.first(where: { $0.name == reference }) else {
            throw AdminFailure(.noInput, "\(identifier) has no deployment named \(reference) (coffer deployment list shows them)")
        }
        return match
    }
}

/// `--collection ID [--team T]`.
struct CollectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The collection's identifier.", valueName: "ID"))
    var collection: String

    @OptionGroup var team: TeamOption

    func locate(_ client: APIClient) async throws -> CollectionLocation {
        try await CollectionLocation.find(collection, team: team.team, client: client)
    }
}

/// `--team T`, optional where the collection identifier says which team.
struct TeamOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The collection's team; needed only when several of your teams have a collection with that identifier.",
        valueName: "TEAM"))
    var team: String?
}
