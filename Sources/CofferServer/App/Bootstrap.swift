import Fluent
import Vapor

/// First start: with no user in the database, create the `admin` user and its owner token.
///
/// The token comes from COFFER_BOOTSTRAP_TOKEN, or is generated and written to
/// `DATA_DIR/bootstrap-token` (mode 0600). Its path is logged, never the token.
enum Bootstrap {
    /// What a start found or did.
    enum Outcome: Sendable {
        /// The database has users: nothing was done.
        case existing
        /// `admin` was created; its token is in the file at `path` (mode 0600).
        case createdWithFile(path: String)
        /// `admin` was created with the token of COFFER_BOOTSTRAP_TOKEN.
        case createdFromEnvironment
    }

    @discardableResult
    static func run(_ app: Application, configuration: ServerConfiguration) async throws -> Outcome {
        let outcome = try await create(app, configuration: configuration)
        app.storage[OutcomeKey.self] = outcome
        return outcome
    }

    struct OutcomeKey: StorageKey { typealias Value = Outcome }

    private static func create(_ app: Application, configuration: ServerConfiguration) async throws -> Outcome {
        guard try await UserRecord.query(on: app.db).count() == 0 else { return .existing }
        let path = configuration.dataDirectory + "/bootstrap-token"
        let secret = configuration.bootstrapToken ?? Secrets.make(prefix: "cft_")
        do {
            try await app.db.transaction { db in
                let admin = UserRecord(name: "admin")
                try await admin.create(on: db)
                _ = try await TokenController.issue(for: admin.requireID(), name: "bootstrap", on: db, secret: secret)
            }
        } catch {
            // Another instance on the same database bootstrapped first.
            if try await UserRecord.query(on: app.db).count() > 0 { return .existing }
            throw error
        }
        if configuration.bootstrapToken == nil {
            try SecretFile.create(at: path, contents: Data((secret + "\n").utf8))
            return .createdWithFile(path: path)
        }
        return .createdFromEnvironment
    }
}
