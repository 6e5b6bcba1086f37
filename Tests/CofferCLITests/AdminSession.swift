import Foundation
import Testing

/// A working folder, a running server and its owner token in `admin.token`, for the admin tests.
///
/// Every run gets its own config folder and, unless a test passes them, empty COFFER_SERVER and
/// COFFER_TOKEN, so nothing from the environment the tests run in leaks in.
struct AdminSession {
    let cli: CLI
    let server: AdminServer

    /// Nil (with an issue recorded by ``AdminServer/start(sourceLocation:)``) if no server started.
    init?(environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) async {
        guard let server = await AdminServer.start(environment: environment, sourceLocation: sourceLocation) else { return nil }
        self.server = server
        cli = CLI()
        cli.writeSecret("admin.token", Data((server.token + "\n").utf8))
    }

    var configFolder: String { cli.path("config") }
    var credentialsPath: String { configFolder + "/credentials.json" }

    func finish() {
        server.stopInBackground()
        cli.cleanUp()
    }

    @discardableResult
    func coffer(_ arguments: String..., token: String? = nil, server: String? = nil,
                environment: [String: String] = [:]) async throws -> CLI.Result {
        try await coffer(arguments, token: token, server: server, environment: environment)
    }

    @discardableResult
    func coffer(_ arguments: [String], token: String? = nil, server: String? = nil,
                environment: [String: String] = [:]) async throws -> CLI.Result {
        var merged = ["COFFER_CONFIG_DIR": configFolder, "COFFER_SERVER": server ?? "", "COFFER_TOKEN": token ?? ""]
        merged.merge(environment) { $1 }
        return try await cli.run(arguments, environment: merged)
    }

    /// `coffer login` with the owner token.
    func login(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await coffer("login", "--server", server.url, "--token-file", "admin.token")
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }

    /// `coffer member add` as the logged-in owner, then `coffer invitation accept --new-account`
    /// as the invited person, in a config folder of their own; returns their API token (read from
    /// the credentials file it saved, as the person's other commands would).
    func invite(_ name: String, role: String, to team: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let added = try await ok("member", "add", "--team", team, "--name", name, "--role", role, sourceLocation: sourceLocation)
        let code = added.split(separator: "\n").first { $0.hasPrefix("cfi_") }.map(String.init) ?? ""
        #expect(!code.isEmpty, "\(added)", sourceLocation: sourceLocation)
        cli.writeSecret(name + ".code", Data((code + "\n").utf8))
        let folder = configFolder + "-" + name
        let accepted = try await coffer("invitation", "accept", "--code-file", name + ".code", "--new-account", name, "--server", server.url,
                                  environment: ["COFFER_CONFIG_DIR": folder])
        #expect(accepted.status == 0, "\(accepted.stderr)", sourceLocation: sourceLocation)
        #expect(!accepted.stdout.contains("cft_"), sourceLocation: sourceLocation)
        let saved = FileManager.default.contents(atPath: folder + "/credentials.json") ?? Data()
        return (try? JSONSerialization.jsonObject(with: saved) as? [String: Any])?["token"] as? String ?? ""
    }

    /// Runs a command that must succeed (as the logged-in user, or with `token`); returns stdout.
    @discardableResult
    func ok(_ arguments: String..., token: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let result = try await cli.run(arguments, environment: [
            "COFFER_CONFIG_DIR": configFolder, "COFFER_SERVER": token == nil ? "" : server.url, "COFFER_TOKEN": token ?? "",
        ], sourceLocation: sourceLocation)
        let unreached = result.stderr.contains("cannot reach") ? "\n" + server.condition() : ""
        #expect(result.status == 0, "coffer \(arguments.joined(separator: " ")): \(result.stderr)\(unreached)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "\(result.stderr)", sourceLocation: sourceLocation)
        return result.stdout
    }

    /// Parses a command's `--json` output.
    static func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else {
            Issue.record("not JSON: \(text)", sourceLocation: sourceLocation)
            return [String: Any]()
        }
        return value
    }

    static func object(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        json(text, sourceLocation: sourceLocation) as? [String: Any] ?? [:]
    }

    static func array(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        json(text, sourceLocation: sourceLocation) as? [[String: Any]] ?? []
    }

    /// One line on stderr, exactly `coffer: MESSAGE`, and the exit status.
    static func expectFailure(_ result: CLI.Result, _ status: Int32, _ message: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr == "coffer: \(message)\n", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result.stdout)", sourceLocation: sourceLocation)
    }
}
