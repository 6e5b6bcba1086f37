import ArgumentParser

/// `coffer app`: a team's apps and their device credentials.
struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Register apps and manage their device credentials.",
        subcommands: [Create.self, List.self, Update.self, RotateCredential.self, Revoke.self]
    )

    /// `coffer app create --team T --name N --platform P [--bundle-id B]`.
    struct Create: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
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

        @Option(help: ArgumentHelp("The collections its devices may read, comma-separated (default: none).", valueName: "A,B"))
        var collections: String?

        @OptionGroup var attestation: AttestationOptions

        @Flag(help: "Print the app, with its credential, as JSON.")
        var json = false

        func run() async throws {
            let policy = try attestation.policy()
            let client = try APIClient.configured()
            let app = try await client.post(API.App.self, ["v1", "teams", team, "apps"],
                                            json: API.NewApp(name: name, platform: platform, bundleID: bundleID,
                                                             collections: AppCommand.list(collections ?? ""), attestation: policy))
            if json { return print(JSONOutput.render(app)) }
            Printable.say("Created app \(app.name) (\(app.platform)) in team \(team), \(AppCommand.describe(app.collections ?? [])).")
            if let policy = app.attestation, policy.policy != "none" { Printable.say("Attestation: \(policy.summary).") }
            AppCommand.printCredential(of: app)
        }
    }

    /// `coffer app update --team T APP_ID [--collections A,B] [--attestation POLICY …]`.
    struct Update: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Choose the collections an app's devices may read (replaces the ones it had), or its attestation policy.",
            discussion: """
                Its devices get manifests of these collections only, and only keys their activated deployments use. An empty \
                list (--collections '') binds it to none. --attestation replaces the policy its devices' key requests must meet.
                """
        )

        @Option(help: "The team.")
        var team: String

        @Argument(help: ArgumentHelp("The app's ID.", valueName: "APP_ID"))
        var id: String

        @Option(help: ArgumentHelp("The collections its devices may read, comma-separated.", valueName: "A,B"))
        var collections: String?

        @OptionGroup var attestation: AttestationOptions

        @Flag(help: "Print the app as JSON.")
        var json = false

        func run() async throws {
            if collections == nil && attestation.attestation == nil { throw CLIFailure(.usage, "give --collections, --attestation or both") }
            let policy = try attestation.policy()
            let client = try APIClient.configured()
            let app = try await client.patch(API.App.self, ["v1", "teams", team, "apps", id],
                                             json: API.AppUpdate(collections: collections.map(AppCommand.list), attestation: policy))
            if json { return print(JSONOutput.render(app)) }
            Printable.say("App \(app.name) is \(AppCommand.describe(app.collections ?? [])).")
            if policy != nil { Printable.say("Attestation: \(app.attestation?.summary ?? "none").") }
        }
    }

    /// `coffer app list --team T`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a team's apps (never their credentials).")

        @Option(help: "The team.")
        var team: String

        @Flag(help: "Print the apps as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let apps = try await client.get([API.App].self, "v1", "teams", team, "apps")
            if json { return print(JSONOutput.render(apps)) }
            var table = TextTable("ID", "NAME", "PLATFORM", "BUNDLE ID", "COLLECTIONS", "ATTESTATION", "CREATED", "REVOKED")
            for app in apps {
                let collections = (app.collections ?? []).isEmpty ? "(none)" : (app.collections ?? []).joined(separator: ",")
                table.add(app.id, app.name, app.platform, app.bundleID, collections, app.attestation?.summary ?? "none", app.createdAt, app.revokedAt)
            }
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
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke an app: its devices get no more keys.")

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

    /// `A, B` → `["A", "B"]`.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// "bound to A, B" or "bound to no collection (…)".
    static func describe(_ collections: [String]) -> String {
        collections.isEmpty
            ? "bound to no collection (its devices get nothing until coffer app update --collections)"
            : "bound to " + collections.joined(separator: ", ")
    }

    static func printCredential(of app: API.App) {
        Printable.say("App ID:     \(app.id)")
        Printable.say("Credential: \(app.credential ?? "-")")
        Printable.say("Store the credential now: it is shown only once (coffer app rotate-credential makes a new one).")
    }
}
