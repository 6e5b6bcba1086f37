import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Vapor

/// `coffer-server check`: what `serve` would need, verified without changing anything (no folder,
/// file, key or table is created): the addresses it listens on, the data and blob folders (or the
/// bucket of COFFER_BLOB_STORE), the master key, the bootstrap token file, the database and that the
/// master key opens what it holds. The settings themselves were checked when they were read.
///
/// Where `serve` refuses to start, `check` asks the function `serve` asks and reports its line:
/// the data folder (``DataFolder/check(_:)``), a stale bootstrap token file
/// (``Bootstrap/staleFileRefusal(_:)``), the stored keys' master key and the database's record of it
/// (``CurrentMasterKey/standing(of:on:holding:)``), the bucket (``S3BlobStore/checkedClient(_:http:)``),
/// on PostgreSQL this host's clock against the database's (``ClockSkew``).
///
/// Each problem is one line that names the file, folder or setting and what to do; none carries
/// a secret (no key, token or password: a database is named by host, port and name only).
public struct ConfigurationCheck: Sendable {
    /// What is wrong, one line each; empty when all is well.
    public var problems: [String] = []
    /// What was found, for the OK summary.
    public var facts: [String] = []

    /// Runs every check against `configuration`.
    public static func run(_ configuration: ServerConfiguration) async -> ConfigurationCheck {
        var check = ConfigurationCheck()
        check.checkPorts(configuration)
        await check.checkListening(configuration)
        check.checkDataFolder(configuration.dataDirectory)
        if let objectStore = configuration.objectStore {
            await check.checkObjectStore(objectStore)
        } else if configuration.blobDirectory != nil {
            check.checkFolder(configuration.resolvedBlobDirectory, what: "the blob folder (COFFER_BLOB_DIR)", private: false)
        } else if FileManager.default.fileExists(atPath: configuration.resolvedBlobDirectory) {
            check.checkFolder(configuration.resolvedBlobDirectory, what: "the blob folder", private: false)
        }
        let masterKey = check.checkMasterKey(configuration)
        // A start reads the pending key only where it reads master.key: not with COFFER_MASTER_KEY.
        if configuration.masterKeyBase64 == nil {
            check.checkPendingMasterKey(PendingMasterKey.path(for: configuration.dataDirectory + "/master.key"))
        }
        check.checkSecretFile(Bootstrap.tokenFile(of: configuration), what: "the bootstrap token file")
        let accounts = await check.checkDatabase(configuration, masterKey: masterKey)
        // A start that finds no account writes a bootstrap token file: one already there stops it.
        if accounts == 0, let refusal = Bootstrap.staleFileRefusal(configuration) {
            check.problems.append(refusal.description)
        }
        return check
    }

    private mutating func checkPorts(_ configuration: ServerConfiguration) {
        if let device = configuration.devicePort, device != 0, device == configuration.port {
            problems.append("COFFER_DEVICE_PORT (--device-port) is the same port as COFFER_PORT (--port): give the device listener a port of its own")
        }
        facts.append("listens on \(configuration.hostname):\(configuration.port)"
                     + (configuration.devicePort.map { ", devices also on port \($0)" } ?? ""))
    }

    /// The data folder as `serve` judges it (``DataFolder/check(_:)``, whose refusal is reported
    /// word for word), then as any folder: writable, private (0700), or possible to create.
    private mutating func checkDataFolder(_ path: String) {
        do {
            _ = try DataFolder.check(path)
        } catch {
            return problems.append(String(describing: error))
        }
        checkFolder(path, what: "the data folder (COFFER_DATA_DIR)", private: true)
    }

    /// An existing folder must be a folder the server can write (and, for the data folder, that
    /// only its owner can open); a missing one must be creatable.
    private mutating func checkFolder(_ path: String, what: String, private isPrivate: Bool) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            var parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            while !FileManager.default.fileExists(atPath: parent), parent != "/" {
                parent = URL(fileURLWithPath: parent).deletingLastPathComponent().path
            }
            if let failure = Self.folderCreationFailure(in: parent) {
                problems.append("\(what) \(path) does not exist and cannot be created: \(parent) \(failure)")
            } else {
                facts.append("\(what) \(path) will be created on first start")
            }
            return
        }
        guard isFolder.boolValue else { return problems.append("\(what) \(path) is not a folder") }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            return problems.append("\(what) \(path) is not writable by this user (\(String(cString: strerror(errno))))")
        }
        if isPrivate, let mode = Self.mode(path), mode & 0o077 != 0 {
            problems.append("\(what) \(path) can be opened by other users (mode \(String(mode, radix: 8))): chmod 700 \(path)")
        }
        facts.append("\(what) \(path) is writable")
    }

    /// Why a folder cannot be made in `parent`, or nil when it can: a folder is made there and removed.
    /// `access()` alone is not enough: for root it says yes to file systems that refuse new entries
    /// (`/proc`, `/sys`).
    private static func folderCreationFailure(in parent: String) -> String? {
        guard access(parent, W_OK | X_OK) == 0 else { return "is not writable" }
        var template = Array((parent == "/" ? "" : parent).utf8CString.dropLast()) + Array("/.coffer-check-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return "refuses new folders (\(String(cString: strerror(errno))))"
        }
        rmdir(made)
        return nil
    }

    /// A file holding a secret, if it exists: readable by the server, and fit to hold a secret by
    /// the rule a start holds the master key files to (``RefusedSecretFile``, in the start's words):
    /// a regular file of this account (or root's) that its group and others may not read or write.
    private mutating func checkSecretFile(_ path: String, what: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        // One line a file: the rule's, or else that this account cannot read it.
        if let refused = RefusedSecretFile(info, what: what, path: path) {
            problems.append(refused.description)
        } else if access(path, R_OK) != 0 {
            problems.append("\(what) \(path) is not readable by this user")
        }
    }

    /// A pending master key file, if there is one, read as a start's settling reads it
    /// (``PendingMasterKey/readKey(at:)``, whose line is reported word for word): what is no torn
    /// write stops a start (another account's file, one others may read, one that is not a regular
    /// file), a torn write does not, and what the key inside means for the stored keys is
    /// ``checkStoredKeys(_:configuration:on:name:)``'s.
    private mutating func checkPendingMasterKey(_ pending: String) {
        guard SecretFile.entryExists(at: pending) else { return }
        do {
            _ = try PendingMasterKey.readKey(at: pending)
        } catch {
            problems.append("\(error)")
        }
    }

    /// The master key from COFFER_MASTER_KEY (already checked) or `DATA_DIR/master.key`, read as a
    /// start reads it (``MasterKey/readFile(at:what:)``: a file others may read is refused with the
    /// start's line).
    private mutating func checkMasterKey(_ configuration: ServerConfiguration) -> MasterKey? {
        if let base64 = configuration.masterKeyBase64 {
            facts.append("master key from COFFER_MASTER_KEY")
            return try? MasterKey(base64: base64)
        }
        let path = configuration.dataDirectory + "/master.key"
        let contents: [UInt8]
        do {
            guard let bytes = try MasterKey.readFile(at: path) else {
                facts.append("no master key yet: \(path) will be created on first start")
                return nil
            }
            contents = bytes
        } catch {
            problems.append("\(error)")
            return nil
        }
        do {
            let key = try MasterKey.decode(contents, from: path)
            facts.append("master key from \(path)")
            return key
        } catch {
            problems.append("\(error)")
            return nil
        }
    }

    /// Connects (an SQLite file only if it exists: opening would create it), asks `SELECT 1`, and
    /// checks that the master key wrapped the stored keys. Returns how many accounts the database
    /// holds: 0 when it has no file or no tables yet, nil when that could not be learned.
    private mutating func checkDatabase(_ configuration: ServerConfiguration, masterKey: MasterKey?) async -> Int? {
        let name: String
        if let url = configuration.databaseURL {
            let components = URLComponents(string: url)
            name = "PostgreSQL at \(components?.host ?? "?"):\(components?.port ?? 5432)\(components?.path ?? "")"
        } else {
            let file = configuration.dataDirectory + "/coffer.sqlite"
            guard FileManager.default.fileExists(atPath: file) else {
                facts.append("no database yet: SQLite \(file) will be created on first start")
                return 0
            }
            guard access(file, R_OK | W_OK) == 0 else {
                problems.append("the SQLite database \(file) is not writable by this user")
                return nil
            }
            name = "SQLite \(file)"
        }
        let app: Application
        do {
            app = try await Application.make(Environment(name: "production", arguments: ["coffer-server"]))
        } catch {
            problems.append("cannot check the database: \(type(of: error))")
            return nil
        }
        let accounts = await inspectDatabase(app, name: name, configuration: configuration, masterKey: masterKey)
        try? await app.asyncShutdown()
        return accounts
    }

    /// The checks of ``checkDatabase(_:masterKey:)`` on a connected application; returns its
    /// number of accounts as that does.
    private mutating func inspectDatabase(_ app: Application, name: String, configuration: ServerConfiguration, masterKey: MasterKey?) async -> Int? {
        do {
            if let url = configuration.databaseURL {
                app.databases.use(try .postgres(url: url), as: .psql)
            } else {
                app.databases.use(.sqlite(.file(configuration.dataDirectory + "/coffer.sqlite")), as: .sqlite)
            }
            let sql = try app.db.sql()
            try await sql.raw("SELECT 1").run()
        } catch {
            problems.append("cannot use the database (\(name)): \(Self.describe(error))")
            return nil
        }
        // PostgreSQL: `serve` refuses a clock too far from the database's (``ClockSkew``).
        let offset = configuration.clockOffset
        if let measured = try? await ClockSkew.measure(on: app.db, clock: { Date().addingTimeInterval(offset) }),
           measured.exceeds(ClockSkew.limit) {
            problems.append(ClockSkew.refusal(measured).description)
        }
        let migrated = (try? await app.db.sql().raw("SELECT COUNT(*) AS n FROM _fluent_migrations").first()) != nil
        guard migrated else {
            facts.append("\(name) reachable; its tables are created on first start")
            return 0
        }
        if let masterKey {
            await checkStoredKeys(masterKey, configuration: configuration, on: app.db, name: name)
        } else if configuration.masterKeyBase64 == nil, !SecretFile.entryExists(at: configuration.dataDirectory + "/master.key"),
                  let keys = try? await KeyRecord.query(on: app.db).count(), let signing = try? await SigningKeyRecord.query(on: app.db).count(),
                  keys + signing > 0 {
            problems.append("\(configuration.dataDirectory)/master.key is missing, but the database holds keys wrapped by a master key: "
                            + "restore the file or set COFFER_MASTER_KEY (a new key would not open them)")
        }
        facts.append("\(name) reachable and migrated")
        return try? await UserRecord.query(on: app.db).count()
    }

    /// A database error without what might hold a secret: PostgreSQL's own message (such as
    /// `password authentication failed for user "coffer"`), else the kind of error.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "\(error.code)"
        }
        if let error = error as? SQLiteError { return "\(error.reason)" }
        return "\(type(of: error))"
    }

    static func mode(_ path: String) -> Int? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue
    }
}
