import Coffer
import CofferFormat
import Foundation
import Testing

/// One server signs the manifests of every team on it. A device must not take another tenant's
/// validly signed manifest for a collection of the same name: the SDK pins the team it was
/// configured for, or the first one it saw.
@Suite("Coffer SDK pins the team it trusts")
struct SDKTrustTests {
    /// A second team on the fleet's server, with its own app, key and a collection named FlowerModels too.
    struct OtherTenant {
        let teamID: String
        let appID: String
        let credential: String
    }

    static func otherTenant(_ fleet: SDKFleet) async throws -> OtherTenant {
        let session = fleet.session
        try await session.ok("team", "create", "Weeds")
        let app = AdminSession.object(try await session.ok("app", "create", "--team", "Weeds", "--name", "WeedApp", "--platform", "ios", "--json"))
        try await session.ok("key", "create", "--team", "Weeds", "--name", "weeds")
        session.cli.write("weed.bin", CLI.randomData(40_000))
        try await session.ok("encrypt", "weed.bin", "--key", "weeds.modelkey", "--output", "weed.coffer", "--quiet")
        try await session.ok("collection", "create", "FlowerModels", "--team", "Weeds", "--models", "FlowerClassifier,FlowerStylizer")
        try await session.ok("deployment", "create", "--team", "Weeds", "--collection", "FlowerModels", "--name", "weeds",
                       "--model", "FlowerClassifier=weed.coffer", "--model", "FlowerStylizer=weed.coffer", "--activate")
        try await session.ok("app", "update", "--team", "Weeds", try #require(app["id"] as? String), "--collections", "FlowerModels")
        return await OtherTenant(teamID: try teamID("Weeds", session), appID: try #require(app["id"] as? String),
                           credential: try #require(app["credential"] as? String))
    }

    static func teamID(_ name: String, _ session: AdminSession) async throws -> String {
        let teams = try JSONSerialization.jsonObject(with: Data(try await session.ok("team", "list", "--json").utf8)) as? [[String: Any]]
        return try #require(teams?.first { $0["name"] as? String == name }?["id"] as? String)
    }

    static func refusedForTeam(_ cause: UnavailableCause) -> Bool {
        if case .manifestRefused(let reason) = cause { return reason.contains("signed for team") }
        return false
    }

    @Test("an SDK configured for team T, or that first saw T, refuses a validly signed manifest of team U for a collection of the same name")
    func otherTenantsManifestIsRefused() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let weeds = try await Self.otherTenant(fleet)
        let flowersTeam = try await Self.teamID("Flowers", fleet.session)
        let (proxy, recorded) = try fleet.manifestRecordingProxy()
        defer { proxy.stop() }

        // Team T's device syncs first: from now on its cache trusts team T for FlowerModels.
        let cache = fleet.folder("flowers-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        let first = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(first.origin == .server && first.sequence == 1)
        #expect(try await first.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])

        // Team U's manifest for its own FlowerModels, validly signed by the same server key.
        var weedsConfiguration = try fleet.configuration(fleet.folder("weeds-cache"), server: proxy.url)
        weedsConfiguration.appID = weeds.appID
        weedsConfiguration.credential = weeds.credential
        let theirs = try await CofferClient(configuration: weedsConfiguration).beginAccessing(identifier: "FlowerModels")
        #expect(theirs.origin == .server && theirs.sequence == 1)
        let weedsManifest = try #require(recorded.last)

        // (1) Replayed to T's device in the server's place (a hostile network, CDN or proxy).
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .respond(weedsManifest) : .forward }
        let replayed = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(replayed.origin.isStale(Self.refusedForTeam), "\(replayed.origin)")
        #expect(replayed.deploymentID == first.deploymentID)
        #expect(try await replayed.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"], "T's models keep serving")

        // (2) T's cache pointed at U's app credential (the server answers U's manifest honestly).
        proxy.setRule { _, _, _, _, _ in .forward }
        var swapped = try fleet.configuration(cache, server: proxy.url)
        swapped.appID = weeds.appID
        swapped.credential = weeds.credential
        let crossed = try await CofferClient(configuration: swapped).beginAccessing(identifier: "FlowerModels")
        #expect(crossed.origin.isStale(Self.refusedForTeam), "\(crossed.origin)")
        #expect(crossed.entries["FlowerClassifier"]?.sha256 == fleet.flowers.sha["classifier"])

        // A cache of T is not there for an app configured for U: nothing to serve.
        var otherTeamsCache = try fleet.configuration(cache, policy: .cachedOnly)
        otherTeamsCache.teamID = weeds.teamID
        await #expect(throws: CofferError.collectionUnavailable(identifier: "FlowerModels", cause: .notCached)) {
            _ = try await CofferClient(configuration: otherTeamsCache).beginAccessing(identifier: "FlowerModels")
        }

        // (3) Configured for T (any case): refused on the very first sync, with nothing cached.
        var pinned = try fleet.configuration(fleet.folder("pinned-cache"), server: proxy.url)
        pinned.teamID = flowersTeam.uppercased()
        let pinnedClient = try CofferClient(configuration: pinned)
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .respond(weedsManifest) : .forward }
        await #expect {
            _ = try await pinnedClient.beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, let cause) = error as? CofferError else { return false }
            return Self.refusedForTeam(cause) && "\(cause)".contains("configured")
        }
        proxy.setRule { _, _, _, _, _ in .forward }
        #expect(try await pinnedClient.beginAccessing(identifier: "FlowerModels").deploymentID == first.deploymentID)

        // Configured for U, with T's own credential: T's honest manifest is refused too.
        var wrongTeam = try fleet.configuration(fleet.folder("wrong-team-cache"))
        wrongTeam.teamID = weeds.teamID
        await #expect(throws: CofferError.self) { _ = try await CofferClient(configuration: wrongTeam).beginAccessing(identifier: "FlowerModels") }

        // A team ID that is not a UUID is a configuration error before any request.
        var malformed = try fleet.configuration(fleet.folder("malformed-cache"))
        malformed.teamID = "Flowers"
        #expect(throws: CofferError.invalidConfiguration("the team ID is not a UUID")) { _ = try CofferClient(configuration: malformed) }

        // coffer sync --team-id pins the same way.
        let refused = try await fleet.session.cli.run(
            ["sync", "--server", fleet.server, "--app", fleet.flowers.appID, "--credential-file", "app.credential",
             "--public-key", fleet.publicKey, "--collection", "FlowerModels", "--cache", "sync-pinned", "--team-id", weeds.teamID])
        #expect(refused.status != 0 && refused.stderr.contains("signed for team"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let accepted = try await fleet.session.cli.run(
            ["sync", "--server", fleet.server, "--app", fleet.flowers.appID, "--credential-file", "app.credential",
             "--public-key", fleet.publicKey, "--collection", "FlowerModels", "--cache", "sync-pinned", "--team-id", flowersTeam, "--json"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(AdminSession.object(accepted.stdout)["expired"] as? Bool == false)
    }
}
