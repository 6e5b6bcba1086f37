import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `coffer blob upload` asks the server whether it has the bytes (`HEAD /v1/blobs/ADDRESS`) before
/// sending them, and stopped at any answer but 2xx and 404. Two answers say nothing of the bytes:
/// 503 `blob_damaged` (the stored copy is damaged — and only an upload repairs it, as the error
/// says) and 429 (the client's address is past the blob routes' budget of misses). It now uploads
/// after either, and the server's answer to the upload is the one that counts.
@Suite("coffer blob upload when the existence check says nothing")
struct BlobUploadCheckTests {
    @Test("a stored copy the server reports damaged is repaired by blob upload; a 429 to the check does not stop the upload")
    func uploadsAfterDamagedOrRefusedCheck() async throws {
        guard let session = await AdminSession(environment: ["COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE": "1"]) else { return }
        defer { session.finish() }
        try await session.login()
        try await session.ok("team", "create", "Flowers")
        try await session.ok("key", "generate", "--name", "k")
        var sealed: [String: Data] = [:]
        for name in ["damaged", "fresh"] {
            session.cli.write(name + ".bin", CLI.randomData(200_000))
            try await session.ok("encrypt", name + ".bin", "--key", "k.modelkey", "--quiet")
            sealed[name] = try #require(session.cli.read(name + ".bin.coffer"))
        }
        func address(_ name: String) -> String { SHA256.hash(data: sealed[name]!).map { String(format: "%02x", $0) }.joined() }

        // Stored, then damaged in the store (a lost tail): the server answers 503 blob_damaged.
        try await session.ok("blob", "upload", "--team", "Flowers", "damaged.bin.coffer")
        let damaged = address("damaged")
        let stored = session.server.folder.appendingPathComponent("data/blobs/\(damaged.prefix(2))/\(damaged)")
        let handle = try FileHandle(forWritingTo: stored)
        try handle.truncate(atOffset: 1000)
        try handle.close()
        let url = URL(string: session.server.url + "/v1/blobs/" + damaged)!
        let (_, before) = try await URLSession.shared.data(from: url)
        #expect((before as? HTTPURLResponse)?.statusCode == 503)

        let repaired = try await session.coffer("blob", "upload", "--team", "Flowers", "damaged.bin.coffer")
        #expect(repaired.status == 0, "\(repaired.stderr)")
        let (served, after) = try await URLSession.shared.data(from: url)
        #expect((after as? HTTPURLResponse)?.statusCode == 200)
        #expect(served == sealed["damaged"])

        // The address's one miss went to the first upload's check (404): a check of an address the
        // server has no record of is now 429, as the next upload's check will be.
        var probe = URLRequest(url: URL(string: session.server.url + "/v1/blobs/" + String(repeating: "ab", count: 32))!)
        probe.httpMethod = "HEAD"
        let (_, refused) = try await URLSession.shared.data(for: probe)
        #expect((refused as? HTTPURLResponse)?.statusCode == 429)
        let uploaded = try await session.coffer("blob", "upload", "--team", "Flowers", "fresh.bin.coffer", "--json")
        #expect(uploaded.status == 0, "\(uploaded.stderr)")
        #expect(AdminSession.object(uploaded.stdout)["created"] as? Bool == true, "\(uploaded.stdout)")
    }
}
