import Fluent
import Vapor

/// First start: with no user in the database, create the `admin` user and its owner token.
///
/// The token comes from COFFER_BOOTSTRAP_TOKEN, or is generated and written to
/// `DATA_DIR/bootstrap-token` (mode 0600). Its path is logged, never the token.
enum Bootstrap {
    static func run(_ app: Application, configuration: ServerConfiguration) async throws {
        guard try await UserRecord.query(on: app.db).count() == 0 else { return }
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
            if try await UserRecord.query(on: app.db).count() > 0 { return }
            throw error
        }
        if configuration.bootstrapToken == nil {
            try SecretFile.create(at: path, contents: Data((secret + "\n").utf8))
            app.logger.notice("created user admin; its API token is in \(path) (mode 0600): use it with coffer login")
        } else {
            app.logger.notice("created user admin with the token from COFFER_BOOTSTRAP_TOKEN")
        }
    }
}
