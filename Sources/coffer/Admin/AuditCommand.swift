import ArgumentParser
import Foundation

/// `coffer audit --team T [--since TIME]`: the team's audit log, newest first.
struct AuditCommand: NetworkCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show a team's audit log, newest first (at most 1000 events)."
    )

    @Option(help: "The team.")
    var team: String

    @Option(help: ArgumentHelp("Only events at or after this time, such as 2026-11-22T08:00:00Z.", valueName: "ISO8601"))
    var since: String?

    @Flag(help: "Print the events as a JSON array.")
    var json = false

    func validate() throws {
        if let since, ISO8601DateFormatter().date(from: since) == nil {
            throw ValidationError("--since must be an ISO 8601 time such as 2026-11-22T08:00:00Z")
        }
    }

    func run() async throws {
        let client = try APIClient.configured()
        let events = try await client.get([API.AuditEvent].self, "v1", "teams", team, "audit",
                                          query: since.map { [("since", $0)] } ?? [])
        if json { return print(JSONOutput.render(events)) }
        var table = TextTable("TIME", "ACTION", "ACTOR", "TARGET", "OUTCOME", "REASON", "DEVICE")
        for event in events {
            table.add(event.at, event.action, event.actor, event.target, event.outcome, event.reason, event.deviceID)
        }
        print(table.render())
    }
}
