import Foundation
import Vapor

/// The few lines `coffer-server serve` logs once it listens (at notice, so LOG_LEVEL=warning
/// silences them): where it listens, where the dashboard is, where the first owner's token is
/// (its file, never the token), and the data folder.
enum Greeting {
    /// In JSON, each line also carries its facts as fields; in text, the sentence says them once.
    static func log(_ app: Application, configuration: ServerConfiguration) {
        let logger = app.logger
        for (message, metadata) in lines(app, configuration: configuration) {
            logger.notice("\(message)", metadata: configuration.logFormat == .json ? metadata : nil)
        }
    }

    static func lines(_ app: Application, configuration: ServerConfiguration) -> [(String, Logger.Metadata)] {
        let port = app.http.server.shared.localAddress?.port ?? configuration.port
        let address = "http://\(urlHost(configuration.hostname)):\(port)"
        var listening = "Coffer is listening on \(address)"
        var listeningMetadata: Logger.Metadata = ["address": .string(address)]
        if let device = app.storage[DeviceListener.Key.self]?.port {
            listening += ", devices also on port \(device)"
            listeningMetadata["devicePort"] = .stringConvertible(device)
        }
        let dashboard = (configuration.publicURL ?? browsable(address, hostname: configuration.hostname, port: port)) + "/dashboard/"
        var lines: [(String, Logger.Metadata)] = [
            (listening, listeningMetadata),
            ("Dashboard: \(dashboard)", ["dashboard": .string(dashboard)]),
        ]
        let tokenFile = Bootstrap.tokenFile(of: configuration)
        switch app.storage[Bootstrap.OutcomeKey.self] {
        case .createdFromEnvironment:
            lines.append(("First start: created user admin; its API token is the one given in COFFER_BOOTSTRAP_TOKEN", [:]))
        case .createdWithFile(let path):
            lines.append(("First start: created user admin; its API token is in \(path) (mode 0600): "
                          + "coffer login --server \(address) --token-file \(path), or paste it into the dashboard",
                          ["bootstrapTokenFile": .string(path)]))
        case .existing, nil:
            if configuration.bootstrapToken == nil, FileManager.default.fileExists(atPath: tokenFile) {
                lines.append(("The first owner's API token is in \(tokenFile) (mode 0600)", ["bootstrapTokenFile": .string(tokenFile)]))
            }
        }
        let folder = URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
        let database = configuration.databaseURL == nil ? "SQLite database, " : ""
        let blobsHere = configuration.blobDirectory == nil && configuration.objectStore == nil
        lines.append(("Data folder: \(folder) (\(database)master key, bootstrap token\(blobsHere ? ", blobs" : ""))",
                      ["dataFolder": .string(folder)]))
        if let store = configuration.objectStore {
            lines.append(("Blobs: \(store)\(store.presign ? ", downloads redirected to presigned URLs" : "")", ["blobStore": .string(store.description)]))
        }
        return lines
    }

    /// An address a browser on this machine can open: the wildcard addresses become loopback.
    static func browsable(_ address: String, hostname: String, port: Int) -> String {
        switch hostname {
        case "0.0.0.0": return "http://127.0.0.1:\(port)"
        case "::", "[::]": return "http://[::1]:\(port)"
        default: return address
        }
    }

    /// A host as it goes into a URL: IPv6 addresses in brackets.
    static func urlHost(_ hostname: String) -> String {
        hostname.contains(":") && !hostname.hasPrefix("[") ? "[\(hostname)]" : hostname
    }
}
