@testable import CofferServer
import Foundation
import Testing

/// The data folder holds the master key: the server uses only one this account owns and no other
/// account may write into, and makes a new one private.
@Suite("Data folder")
struct DataFolderTests {
    static func fresh() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("coffer-data-" + UUID().uuidString).path
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("a folder others may write into is refused before any key is read or made; a missing one is made 0700")
    func writableByOthers() async throws {
        let folder = Self.fresh()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        // Someone else prepared it, with a master key they know.
        chmod(folder, 0o777)
        let planted = Data("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n".utf8)
        // 0600, so that only the folder is wrong (a key file others may read is refused on its own).
        FileManager.default.createFile(atPath: folder + "/master.key", contents: planted, attributes: [.posixPermissions: 0o600])
        await #expect {
            _ = try await TestServer.start(dataDirectory: folder)
        } throws: { error in
            let line = String(describing: error)
            return line.contains("other accounts can write into the data folder") && line.contains("777") && !line.contains("AAAA")
        }
        #expect(throws: ServerSetupError.self) { try DataFolder.prepare(folder) }
        #expect(!FileManager.default.fileExists(atPath: folder + "/coffer.sqlite"))
        chmod(folder, 0o775)
        #expect(throws: ServerSetupError.self) { try DataFolder.prepare(folder) }
        chmod(folder, 0o755)
        try DataFolder.prepare(folder)

        let missing = Self.fresh() + "/nested"
        defer { try? FileManager.default.removeItem(atPath: (missing as NSString).deletingLastPathComponent) }
        try DataFolder.prepare(missing)
        #expect(try Self.mode(missing) == 0o700)
        let file = Self.fresh()
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: ServerSetupError.self) { try DataFolder.prepare(file) }
    }

    @Test("a secret file made in a missing folder makes that folder 0700 (coffer-server public-key before the first start)")
    func secretFileFolder() throws {
        let folder = Self.fresh()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try MasterKey.load(base64: nil, path: folder + "/master.key")
        #expect(try Self.mode(folder) == 0o700)
        #expect(try Self.mode(folder + "/master.key") == 0o600)
    }
}
