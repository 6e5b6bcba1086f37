import ArgumentParser

/// `coffer member`: who is in a team.
struct MemberCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member",
        abstract: "Invite, list and remove a team's members, and change their roles.",
        subcommands: [Add.self, List.self, Remove.self]
    )

    /// A member's role; each includes the ones below it.
    enum Role: String, ExpressibleByArgument, CaseIterable {
        case owner, developer, viewer
    }

    /// `coffer member add --team T --name N --role R`.
    struct Add: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Invite someone to a team, or change a member's role (owners only).",
            discussion: """
                A NAME that is already a member gets ROLE. Anyone else gets an invitation: its code is \
                printed once, for you to give them privately; they run coffer invitation accept with \
                their own account (or --new-account). No account is made for them, and no token.
                """
        )

        @Option(help: "The team.")
        var team: String

        @Option(help: "The member's account name, or who the invitation is for.")
        var name: String

        @Option(help: "owner, developer or viewer.")
        var role: Role

        @Flag(help: "Print the member as JSON.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let member = try await client.post(API.Member.self, ["v1", "teams", team, "members"],
                                               json: API.NewMember(name: name, role: role.rawValue))
            if json { return print(JSONOutput.render(member)) }
            guard let invitation = member.invitation else {
                return Printable.say("\(member.name) is now \(member.role) in team \(team).")
            }
            InvitationCommand.printCode(of: invitation)
        }
    }

    /// `coffer member list --team T`.
    struct List: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a team's members and their roles.")

        @Option(help: "The team.")
        var team: String

        @Flag(help: "Print the members as a JSON array.")
        var json = false

        func run() async throws {
            let client = try APIClient.configured()
            let members = try await client.get([API.Member].self, "v1", "teams", team, "members")
            if json { return print(JSONOutput.render(members)) }
            var table = TextTable("NAME", "ROLE")
            for member in members { table.add(member.name, member.role) }
            print(table.render())
        }
    }

    /// `coffer member remove --team T --name N`.
    struct Remove: NetworkCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a member from a team (owners only).")

        @Option(help: "The team.")
        var team: String

        @Option(help: "The member's account name.")
        var name: String

        func run() async throws {
            let client = try APIClient.configured()
            try await client.delete("v1", "teams", team, "members", name)
            Printable.say("Removed \(name) from team \(team).")
        }
    }
}
