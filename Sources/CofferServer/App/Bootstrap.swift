import Fluent
import Foundation
import Vapor
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// First start: with no user in the database, create the `admin` user and its owner token.
///
/// The token comes from COFFER_BOOTSTRAP_TOKEN, or is generated and written to
/// `DATA_DIR/bootstrap-token` (mode 0600). Its path is logged, never the token.
///
/// A generated token is in its file before it is in the database, so no start ends with a
/// committed token nobody can read: a start that fails or dies after the commit leaves the file,
/// and one whose transaction did not commit removes it. A file already there while the database
/// has no user belongs to an earlier database: the start stops before writing anything.
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
        if let secret = configuration.bootstrapToken {
            do {
                try await createAdmin(secret: secret, on: app.db)
            } catch {
                // Another instance on the same database bootstrapped first.
                if try await UserRecord.query(on: app.db).count() > 0 { return .existing }
                throw error
            }
            return .createdFromEnvironment
        }
        let path = tokenFile(of: configuration)
        if let refusal = staleFileRefusal(configuration) {
            // Another instance sharing this folder may be between writing its file and committing.
            try await Task.sleep(for: .seconds(1))
            guard try await UserRecord.query(on: app.db).count() == 0 else { return .existing }
            throw refusal
        }
        let secret = Secrets.make(prefix: "cft_")
        try SecretFile.create(at: path, contents: Data((secret + "\n").utf8))
        do {
            try await createAdmin(secret: secret, on: app.db)
        } catch {
            // The commit may have happened though its answer was lost (a dropped connection): the
            // file is removed only once the database says the token is not there.
            let stored = try? await isStored(secret, on: app.db)
            if stored == true { return .createdWithFile(path: path) }
            guard stored == false else { throw error }
            unlink(path)
            // Another instance on the same database bootstrapped first (the user name is unique).
            if try await UserRecord.query(on: app.db).count() > 0 { return .existing }
            throw error
        }
        return .createdWithFile(path: path)
    }

    /// Where a first start without COFFER_BOOTSTRAP_TOKEN writes the token.
    static func tokenFile(of configuration: ServerConfiguration) -> String {
        configuration.dataDirectory + "/bootstrap-token"
    }

    /// Why a start that finds no user in the database stops before writing anything, or nil when
    /// it may create `admin`: without COFFER_BOOTSTRAP_TOKEN, anything already at the token file's
    /// path holds a token of an earlier database, which this one would refuse. `coffer-server
    /// check` reports the same line; neither names the token.
    static func staleFileRefusal(_ configuration: ServerConfiguration) -> ServerSetupError? {
        let path = tokenFile(of: configuration)
        guard configuration.bootstrapToken == nil, SecretFile.entryExists(at: path) else { return nil }
        return ServerSetupError("the database has no users but \(path) exists: it holds a token of an earlier database, "
                                + "which this one would refuse; remove it (a new one is written) or set COFFER_BOOTSTRAP_TOKEN, and start again")
    }

    /// Creates `admin` and its owner token `secret` in one transaction.
    private static func createAdmin(secret: String, on database: any Database) async throws {
        try await database.transaction { db in
            let admin = UserRecord(name: "admin")
            try await admin.create(on: db)
            _ = try await TokenController.issue(for: admin.requireID(), name: "bootstrap", on: db, secret: secret)
        }
    }

    /// Whether a token `secret` is in the database.
    private static func isStored(_ secret: String, on db: any Database) async throws -> Bool {
        try await TokenRecord.query(on: db).filter(\.$tokenHash == Secrets.hash(secret)).first() != nil
    }
}
