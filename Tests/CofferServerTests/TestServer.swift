import BlockingTestSupport
import CofferServer
import Foundation
import S3TestSupport
import Testing
import Vapor
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Coffer server on a random loopback port with a temporary data folder, over SQLite or
/// (when COFFER_TEST_DATABASE_URL is set) a fresh PostgreSQL database of its own, its blobs in a
/// folder or (``TestStore/s3``) a fresh bucket of the test gateway.
final class TestServer: @unchecked Sendable {
    let app: Application
    let base: URL
    let dataDirectory: String
    let adminToken: String
    let configuration: ServerConfiguration
    /// The PostgreSQL database this server made for itself (dropped by ``stop(removingData:)``).
    private var ownDatabase: String?
    /// The bucket this server made for itself (emptied and removed by ``stop(removingData:)``).
    private var ownBucket: ObjectStoreSettings?

    /// The PostgreSQL server to test against, if any (set by .ci/run).
    static var postgresURL: String? { ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"] }

    static func start(
        postgres: Bool = false, store: TestStore = .folder, dataDirectory: String? = nil, databaseURL: String? = nil,
        logger: Logger? = nil, adjust: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let folder = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("coffer-server-" + UUID().uuidString).path
        var configuration = ServerConfiguration(dataDirectory: folder, hostname: "127.0.0.1", port: 0)
        configuration.bootstrapToken = "cft_test_" + UUID().uuidString
        var made: String?
        if postgres {
            if let databaseURL {
                configuration.databaseURL = databaseURL
            } else {
                made = try await PostgresDatabases.create()
                configuration.databaseURL = made
            }
        }
        var bucket: ObjectStoreSettings?
        if store == .s3 {
            bucket = try await ObjectStoreSettings.testBucket()
            configuration.objectStore = bucket
        }
        adjust(&configuration)
        do {
            let server = try await start(configuration, logger: logger)
            server.ownDatabase = made
            server.ownBucket = bucket
            return server
        } catch {
            if let bucket { await S3TestGateway.removeBucket(bucket.bucket) }
            throw error
        }
    }

    /// A server for `configuration`, logging to `logger` (a test reading the log) or to Vapor's default.
    static func start(_ configuration: ServerConfiguration, logger: Logger? = nil) async throws -> TestServer {
        // Vapor's per-route request metrics, as `coffer-server serve` has them (once per process).
        ProcessMetrics.bootstrap()
        let app = try await Application.make(.testing, logger: logger ?? Logger(label: "codes.vapor.application"))
        do {
            try await configure(app, configuration)
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        let port = app.http.server.shared.localAddress!.port!
        return TestServer(app: app, base: URL(string: "http://127.0.0.1:\(port)")!, configuration: configuration)
    }

    private init(app: Application, base: URL, configuration: ServerConfiguration) {
        self.app = app
        self.base = base
        self.dataDirectory = configuration.dataDirectory
        self.adminToken = configuration.bootstrapToken ?? ""
        self.configuration = configuration
    }

    func stop(removingData: Bool = true) async throws {
        await app.drainListeners()
        try await app.asyncShutdown()
        if removingData {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            if let ownDatabase { await offThePool { PostgresDatabases.drop(ownDatabase) } }
            if let ownBucket { await S3TestGateway.removeBucket(ownBucket.bucket) }
        }
    }
}

/// One fresh PostgreSQL database per test server, created through `psql` against the server
/// named by COFFER_TEST_DATABASE_URL.
enum PostgresDatabases {
    static func create() async throws -> String {
        guard let admin = TestServer.postgresURL else { throw TestFailure("COFFER_TEST_DATABASE_URL is not set") }
        guard var components = URLComponents(string: admin), components.scheme?.hasPrefix("postgres") == true else {
            throw TestFailure("COFFER_TEST_DATABASE_URL is not one postgres:// URL (\(admin.count) characters)")
        }
        let name = "coffer_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let status = try await offThePool {
            try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", admin, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(name)"],
                                 errorOutput: .file(.standardError)).status
        }
        guard status == 0 else { throw TestFailure("psql could not create database \(name)") }
        components.path = "/" + name
        return components.string!
    }
}

extension PostgresDatabases {
    /// Drops a database `create()` made (best effort: a test database left behind is only clutter).
    static func drop(_ url: String) {
        guard let admin = TestServer.postgresURL, let name = URLComponents(string: url)?.path.dropFirst(),
              name.hasPrefix("coffer_test_"), name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        else { return }
        _ = try? ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["psql", admin, "-qc", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"])
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
