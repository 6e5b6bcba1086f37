import ArgumentParser

/// `coffer app`: a team's apps and their device credentials.
struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Register apps and manage their device credentials.",
        subcommands: [Create.self, List.self, RotateCredential.self, Revoke.self]
    )

    /// `coffer app create --team T --name N --platform P [--bundle-id B]`.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an app; prints its app ID and device credential (shown only once)."
        )

        @Option(help: "The team.")
        var team: String

        @Option(help: "The app's name.")
        var name: String

        @Option(help: "ios, ipados, macos, tvos, watchos, visionos, android, linux, windows, web or other.")
        var platform: String

        @Option(help: ArgumentHelp("The app's bundle identifier.", valueName: "ID"))
        var bundleID: String?

        @Flag(help: "Print the app, with its credential, as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let app = try await client.post(API.App.self, ["v1", "teams", team, "apps"],
                                            json: API.NewApp(name: name, platform: platform, bundleID: bundleID))
            if json { return print(JSONOutput.render(app)) }
            Printable.say("Created app \(app.name) (\(app.platform)) in team \(team).")
            AppCommand.printCredential(of: app)
        }
    }

    /// `coffer app list --team T`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(abstract: "List a team's apps (never their credentials).")

        @Option(help: "The team.")
        var team: String

        @Flag(help: "Print the apps as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let apps = try await client.get([API.App].self, "v1", "teams", team, "apps")
            if json { return print(JSONOutput.render(apps)) }
            var table = TextTable("ID", "NAME", "PLATFORM", "BUNDLE ID", "CREATED", "REVOKED")
            for app in apps { table.add(app.id, app.name, app.platform, app.bundleID, app.createdAt, app.revokedAt) }
            print(table.render())
        }
    }

    /// `coffer app rotate-credential --team T APP_ID`.
    struct RotateCredential: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-credential",
            abstract: "Give an app a new device credential (shown only once)."
        )

        @Option(help: "The team.")
        var team: String

        @Argument(help: ArgumentHelp("The app's ID.", valueName: "APP_ID"))
        var id: String

        @Flag(help: "Print the app, with its new credential, as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let app = try await client.post(API.App.self, ["v1", "teams", team, "apps", id, "credential"])
            if json { return print(JSONOutput.render(app)) }
            Printable.say("Rotated the credential of app \(app.name).")
            AppCommand.printCredential(of: app)
        }
    }

    /// `coffer app revoke --team T APP_ID`.
    struct Revoke: NetworkCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an app: its devices get no more keys.")

        @Option(help: "The team.")
        var team: String

        @Argument(help: ArgumentHelp("The app's ID.", valueName: "APP_ID"))
        var id: String

        func run() async throws {
            let client = try APIClient.configured()
            try await client.delete("v1", "teams", team, "apps", id)
            Printable.say("Revoked app \(id).")
        }
    }

    static func printCredential(of app: API.App) {
        Printable.say("App ID:     \(app.id)")
        Printable.say("Credential: \(app.credential ?? "-")")
        Printable.say("Store the credential now: it is shown only once (coffer app rotate-credential makes a new one).")
    }
}
