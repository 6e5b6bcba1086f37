import Crypto
import Foundation
import S3TestSupport
import Testing

/// Uploads into a bucket hold memory (the parts of a multipart upload) while they run; all of them
/// together may hold at most COFFER_S3_UPLOAD_MEMORY. An attacker with an upload right (any team's
/// developer) who opens slow uploads gets the rest refused at once, not the server's memory.
@Suite("Uploads into a bucket share one memory budget",
       .enabled(if: S3TestGateway.configured, "set COFFER_TEST_S3_ENDPOINT, COFFER_TEST_S3_ACCESS_KEY and COFFER_TEST_S3_SECRET_KEY"))
struct UploadMemoryTests {
    @Test("a slow upload holding the whole budget gets another account's next refused with 503 uploads_busy; once it is cut, uploads go through")
    func slowUploadsCannotTakeTheMemory() async throws {
        // Room for exactly one upload's parts (8 MiB × 5).
        try await Self.withSession(uploadMemory: 41_943_040) { session, bucket in
            try await session.ok("team", "create", "Flowers")
            // Mallory, another developer of Flowers with an account of her own, holds the slow upload.
            let mallory = try await session.invite("mallory", role: "developer", to: "Flowers")
            try await session.ok("key", "generate", "--name", "k")
            session.cli.write("model.bin", CLI.randomData(1 << 20))
            session.cli.write("slow.bin", CLI.randomData(4 << 20))
            try await session.ok("encrypt", "model.bin", "--key", "k.modelkey", "--quiet")
            try await session.ok("encrypt", "slow.bin", "--key", "k.modelkey", "--quiet")
            let sealed = try #require(session.cli.read("model.bin.coffer"))
            let slow = try #require(session.cli.read("slow.bin.coffer"))

            // A PUT of a real sealed model that sends its first MiB and then waits: it holds its reservation,
            // the whole budget (a budget of one upload lets one account hold it all).
            let held = try await Self.holdUpload(of: slow, session: session, token: mallory, team: "Flowers", bucket: bucket)
            let busy = try await session.coffer("blob", "upload", "--team", "Flowers", "model.bin.coffer")
            #expect(busy.status == 69 && busy.stderr.contains("try again in 10 seconds (HTTP 503 uploads_busy)"), "\(busy.stderr)")
            let leaked = busy.stderr.contains(session.server.token) || busy.stderr.contains(mallory)
            #expect(!leaked)

            // Cut the slow upload: its memory comes back, and the refused upload goes through.
            held.close()
            let stored = try await Self.eventuallyStored(refusedAs: "uploads_busy") {
                try await session.coffer("blob", "upload", "--team", "Flowers", "model.bin.coffer", "--json")
            }
            #expect(stored, "the memory of a cut upload never came back")
            let address = SHA256.hash(data: sealed).map { String(format: "%02x", $0) }.joined()
            #expect(try await session.ok("blob", "download", address, "--output", "copy.coffer").contains("SHA-256 verified"))
            #expect(session.cli.read("copy.coffer") == sealed)
        }
    }
}

extension UploadMemoryTests {
    @Test("one account's slow uploads take only its share: its next upload is refused with 429 too_many_uploads while another tenant's goes through")
    func oneAccountTakesOnlyItsShare() async throws {
        // Room for two uploads' parts (8 MiB × 5 each); one account's share is one of them.
        try await Self.withSession(uploadMemory: 83_886_080) { session, bucket in
            try await session.ok("team", "create", "Flowers")
            try await session.ok("team", "create", "Bees")
            // Mallory, a developer of Bees only, with an account of her own.
            let mallory = try await session.invite("mallory", role: "developer", to: "Bees")
            try await session.ok("key", "generate", "--name", "k")
            for name in ["hers", "theirs", "slow"] { session.cli.write(name + ".bin", CLI.randomData(name == "slow" ? 4 << 20 : 1 << 20)) }
            for name in ["hers", "theirs", "slow"] { try await session.ok("encrypt", name + ".bin", "--key", "k.modelkey", "--quiet") }
            let slow = try #require(session.cli.read("slow.bin.coffer"))
            let malloryEnvironment = ["COFFER_CONFIG_DIR": session.configFolder + "-mallory"]

            // Mallory's slow upload sends its first MiB and waits: it holds her whole share.
            let held = try await Self.holdUpload(of: slow, session: session, token: mallory, team: "Bees", bucket: bucket)
            let busy = try await session.coffer("blob", "upload", "--team", "Bees", "hers.bin.coffer", environment: malloryEnvironment)
            #expect(busy.status == 75 && busy.stderr.contains("try again in 10 seconds (HTTP 429 too_many_uploads)"), "\(busy.stderr)")
            let leaked = busy.stderr.contains(mallory)
            #expect(!leaked)

            // Another tenant's upload goes through meanwhile: the budget was not hers to take.
            let theirs = try await session.coffer("blob", "upload", "--team", "Flowers", "theirs.bin.coffer")
            #expect(theirs.status == 0, "\(theirs.stderr)")

            // Her slow upload cut, her share comes back.
            held.close()
            let stored = try await Self.eventuallyStored(refusedAs: "too_many_uploads") {
                try await session.coffer("blob", "upload", "--team", "Bees", "hers.bin.coffer", environment: malloryEnvironment)
            }
            #expect(stored, "the share of a cut upload never came back")
        }
    }

    /// Runs `body` with a logged-in session of a server on a bucket of its own whose uploads may hold
    /// `uploadMemory` bytes at once.
    private static func withSession(uploadMemory: Int, _ body: (AdminSession, String) async throws -> Void) async throws {
        let (environment, bucket) = try await ServerBlobStore.s3.serverEnvironment()
        defer { if let bucket { Task { await S3TestGateway.removeBucket(bucket) } } }
        let store = try #require(bucket)
        guard let session = await AdminSession(environment: environment.merging(["COFFER_S3_UPLOAD_MEMORY": String(uploadMemory)]) { $1 }) else { return }
        defer { session.finish() }
        try await session.login()
        try await body(session, store)
    }

    /// A ``HeldUpload`` of `body` with `token`, once its memory is reserved (its bucket lists an
    /// unfinished multipart upload; `incoming/` objects a stated address never makes).
    private static func holdUpload(of body: Data, session: AdminSession, token: String, team: String, bucket: String) async throws -> HeldUpload {
        let address = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
        let held = try HeldUpload(port: session.server.port, method: "PUT", path: "/v1/teams/\(team)/blobs/\(address)",
                                  headers: [("Authorization", "Bearer \(token)")], body: body, sent: 1 << 20)
        try await held.waitUntilReserved { try await S3TestGateway.leftovers(bucket: bucket) > 0 }
        return held
    }

    /// Tries `upload` every 100 ms until it goes through (false after 100 tries); every refusal
    /// meanwhile must be `code`'s.
    private static func eventuallyStored(refusedAs code: String, _ upload: () async throws -> CLI.Result) async throws -> Bool {
        for _ in 0..<100 {
            let attempt = try await upload()
            if attempt.status == 0 { return true }
            #expect(attempt.stderr.contains(code), "\(attempt.stderr)")
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return false
    }
}
