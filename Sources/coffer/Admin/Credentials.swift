import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server and API token `coffer login` saved, in `credentials.json` (mode 0600) in the config
/// folder: COFFER_CONFIG_DIR, else `$XDG_CONFIG_HOME/coffer`, else `~/.config/coffer` (mode 0700).
struct Credentials: Codable, Equatable {
    var server: String
    var token: String

    static let fileName = "credentials.json"
    static let maximumFileSize = 64 << 10

    /// The folder that holds the credentials file.
    static func folder(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let folder = environment["COFFER_CONFIG_DIR"], !folder.isEmpty { return folder }
        if let base = environment["XDG_CONFIG_HOME"], !base.isEmpty { return base + "/coffer" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/coffer"
    }

    static func path(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        folder(environment) + "/" + fileName
    }

    /// The saved credentials, or nil if there are none. Refused (77), as ssh refuses its keys,
    /// when the folder is neither the user's nor root's or others may write in it (they could put
    /// their own server and token there: models sealed with keys from that server), or when the
    /// file is neither the user's nor root's or others may read or write it.
    static func load(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Credentials? {
        let path = path(environment)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        try checkFolder(folder(environment))
        // The file checked is the file read (its descriptor's `fstat`), and never more than the
        // limit is read: a huge file is refused, not taken into memory.
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, atMost: maximumFileSize + 1) { try checkFile(path, $0) }
        } catch let failure as AdminFailure {
            throw failure
        } catch {
            throw AdminFailure(.noInput, "cannot read \(path); run coffer login again")
        }
        guard bytes.count <= maximumFileSize else {
            throw AdminFailure(.noInput, "\(path) is over \(maximumFileSize >> 10) KiB, not a credentials file; run coffer login again")
        }
        guard let credentials = try? JSONDecoder().decode(Credentials.self, from: Data(bytes)) else {
            throw AdminFailure(.noInput, "\(path) is not a credentials file; run coffer login again")
        }
        return credentials
    }

    /// Writes the credentials atomically with mode 0600, creating the folder with mode 0700.
    func save(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let folder = Self.folder(environment)
        if !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw AdminFailure(.cannotCreate, "cannot create the folder \(folder) for the credentials")
            }
        }
        try Self.checkFolder(folder)
        let path = Self.path(environment)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let bytes = Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
        try AtomicOutput.write(bytes, to: path, replacing: true)
        return path
    }

    /// Refuses a folder that is neither the user's nor root's (as ssh), or that its group or others
    /// may write in.
    static func checkFolder(_ folder: String) throws {
        var info = stat()
        guard stat(folder, &info) == 0 else { return }  // reading or writing in it then says what is wrong
        let others = info.st_mode & 0o022
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw AdminFailure(.permission, "the credentials folder \(folder) is not yours; set COFFER_CONFIG_DIR to a folder of yours")
        }
        guard others == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw AdminFailure(.permission, "the credentials folder \(folder) may be written by others (mode \(mode)); chmod 700 it, or set COFFER_CONFIG_DIR to a folder of yours")
        }
    }

    /// Refuses a credentials file (`info`: its `fstat`) that is not a regular file, is neither the
    /// user's nor root's, or that its group or others may read or write.
    static func checkFile(_ path: String, _ info: stat) throws {
        switch SecretFileProblem.of(info) {
        case nil: return
        case .notRegular: throw AdminFailure(.noInput, "\(path) is not a file; run coffer login again")
        case .notYours:
            throw AdminFailure(.permission, "\(path) is not yours; run coffer login again, or set COFFER_CONFIG_DIR to a folder of yours")
        case .open(let mode):
            throw AdminFailure(.permission, "\(path) may be read or written by others (mode \(mode)); chmod 600 it if it is yours, or run coffer login again")
        case .rootsAndOpen(let mode):
            throw AdminFailure(.permission, "\(path) belongs to root and may be read or written by others (mode \(mode)); "
                               + "run coffer login again, or set COFFER_CONFIG_DIR to a folder of yours")
        case .unreadable(let mode):  // not found in a file that was opened; here for completeness
            throw AdminFailure(.permission, "\(path) cannot be read by you (mode \(mode)); chmod 600 it, or run coffer login again")
        }
    }

    /// Removes the saved credentials; false if there were none.
    static func remove(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        let path = path(environment)
        guard FileManager.default.fileExists(atPath: path) else { return false }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw AdminFailure(.cannotCreate, "cannot remove \(path)")
        }
        return true
    }
}

/// API tokens as given on the command line, in a file or in COFFER_TOKEN.
enum APIToken {
    /// The token with surrounding whitespace removed; usage error if empty or if it holds
    /// whitespace or control characters (it goes into an HTTP header). Never quotes the token.
    static func clean(_ text: String, from source: String) throws -> String {
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw AdminFailure(.usage, "the API token in \(source) is empty") }
        guard token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw AdminFailure(.usage, "the API token in \(source) has spaces or characters a token never has")
        }
        return token
    }

    /// Reads a token file, `-` for standard input (at most 4 KiB, and no byte past that is read;
    /// one token, surrounding whitespace ignored). A file of another user, or one others may read
    /// or write, is refused (``SecretFile``).
    static func read(file path: String) throws -> String {
        let source = path == "-" ? "standard input" : path
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.read(path, atMost: 4097, what: "token file", standardInput: true)
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw AdminFailure(.noInput, "cannot read token file \(source)")
        }
        guard bytes.count <= 4096 else { throw AdminFailure(.usage, "token file \(source) is over 4 KiB; is it the right file?") }
        return try clean(String(decoding: bytes, as: UTF8.self), from: source)
    }
}
