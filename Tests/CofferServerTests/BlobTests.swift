import BlockingTestSupport
import CofferFormat
@testable import CofferServer
import Foundation
import NIOCore
import Testing

@Suite("Model storage")
struct BlobTests {
    @Test("uploads are checked, stored once, and served with Range, a strong ETag and immutable caching", arguments: TestStore.available)
    func storage(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) { $0.maximumBlobSize = 1 << 20 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal((0..<200_000).map { UInt8(truncatingIfNeeded: $0) }, name: "m", using: .modelKey(key)))
        let address = sealed.sha256Hex

        let created = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed)
        #expect(created.status == 201)
        #expect(created.object["size"] as? Int == sealed.count)
        let again = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed)
        #expect(again.status == 200)
        let lying = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed.prefix(100))
        // Another size than the registered blob's: refused before a byte is read.
        #expect(lying.errorCode == "digest_mismatch")

        let public_ = HTTP(base: server.base)
        let whole = try await public_.call("GET", "/v1/blobs/\(address)")
        #expect(whole.status == 200)
        #expect(whole.body == sealed)
        #expect(whole.header("ETag") == "\"\(address)\"")
        #expect(whole.header("Cache-Control") == "public, max-age=31536000, immutable")
        let range = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=100-1099"])
        #expect(range.status == 206)
        #expect(range.body == sealed[100...1099])
        #expect(range.header("Content-Range") == "bytes 100-1099/\(sealed.count)")
        let n = sealed.count
        for (header, expected) in [("bytes=\(n - 10)-\(n)", sealed.suffix(10)), ("bytes=\(n - 5)-", sealed.suffix(5)),
                                   ("bytes=-7", sealed.suffix(7)), ("bytes=0-0", sealed.prefix(1)),
                                   ("bytes=10-\(n + 1000)", sealed.dropFirst(10))] {
            let part = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": header])
            #expect(part.status == 206, "\(header)")
            #expect(part.body == Data(expected), "\(header)")
            #expect(part.header("Content-Length") == "\(expected.count)", "\(header)")
        }
        let unsatisfiable = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=\(n)-"])
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.header("Content-Range") == "bytes */\(n)")
        #expect(try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=5-1,9-10"]).body == sealed)
        // If-Range (RFC 9110 §13.1.5): the range only while it names the blob's strong ETag; another
        // tag, a weak one or a date (a blob sends no Last-Modified) gets the whole blob.
        for validator in ["\"x\"", "W/\"\(address)\"", "Tue, 15 Nov 1994 08:12:31 GMT"] {
            let other = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0", "If-Range": validator])
            #expect(other.status == 200 && other.body == sealed && other.header("Content-Range") == nil, "\(validator)")
        }
        let otherHead = try await public_.call("HEAD", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0", "If-Range": "\"x\""])
        #expect(otherHead.status == 200 && otherHead.header("Content-Length") == "\(n)")
        let matching = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-0", "If-Range": "\"\(address)\""])
        #expect(matching.status == 206 && matching.body == sealed.prefix(1))
        let cached = try await public_.call("GET", "/v1/blobs/\(address)", headers: ["If-None-Match": "\"\(address)\""])
        #expect(cached.status == 304)
        #expect(cached.body.isEmpty)
        let head = try await public_.call("HEAD", "/v1/blobs/\(address)")
        #expect(head.status == 200 && head.header("Content-Length") == "\(sealed.count)")
        for method in ["GET", "HEAD"] {
            // A cache may keep a 404 by heuristic: one that did would go on refusing the blob once it is uploaded.
            let missing = try await public_.call(method, "/v1/blobs/\(String(repeating: "0", count: 64))")
            #expect(missing.status == 404, "\(method)")
            #expect(missing.header("Cache-Control") == "no-store", "\(method): \(missing.headers)")
        }
        #expect(try await public_.call("GET", "/v1/blobs/not-hex").status == 400)

        // Refusals: wrong digest, not a container, a header whose length disagrees, too large.
        var tampered = sealed
        tampered[500] ^= 1
        let wrongDigest = try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address.replacingOccurrences(of: address.prefix(1), with: address.hasPrefix("a") ? "b" : "a", options: .anchored))", body: sealed)
        #expect(wrongDigest.errorCode == "digest_mismatch")
        let junk = Data(repeating: 1, count: 5000)
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(junk.sha256Hex)", body: junk).errorCode == "not_a_container")
        let truncated = sealed.prefix(sealed.count - 10)
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(truncated.sha256Hex)", body: truncated).errorCode == "not_a_container")
        let big = Data(try SealedModel.seal(Array(repeating: 0, count: 1 << 20), name: "big", using: .modelKey(key)))
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(big.sha256Hex)", body: big).status == 413)
        // Nothing half-written is left, and nothing refused is downloadable.
        #expect(try await server.leftoverUploads() == 0)
        #expect(try await public_.call("GET", "/v1/blobs/\(junk.sha256Hex)").status == 404)
    }

    @Test("a stored blob of the wrong size (damaged) is not served, and is replaced by an upload whose bytes check; a lying upload does not replace it")
    func damagedBlobIsReplaced() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }, name: "m", using: .modelKey(key)))
        let address = sealed.sha256Hex
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        // The disk loses the blob's tail.
        let path = server.configuration.resolvedBlobDirectoryForTests + "/" + address.prefix(2) + "/" + address
        try sealed.prefix(1000).write(to: URL(fileURLWithPath: path))
        let public_ = HTTP(base: server.base)
        // Not served as the blob (a CDN would keep it for a year): 503, not to be cached.
        for method in ["GET", "HEAD"] {
            let damaged = try await public_.call(method, "/v1/blobs/\(address)")
            #expect(damaged.status == 503 && damaged.header("Cache-Control") == "no-store", "\(method): \(damaged.status)")
        }
        #expect(try await public_.call("GET", "/v1/blobs/\(address)").errorCode == "blob_damaged")

        // Bytes that do not hash to the address leave it as it is.
        var tampered = sealed
        tampered[sealed.count / 2] ^= 1
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: tampered).errorCode == "digest_mismatch")
        #expect(try await public_.call("GET", "/v1/blobs/\(address)").status == 503)
        // The right bytes replace it (before: 422 "a blob with this address has 1000 bytes", for ever).
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        #expect(try await public_.call("GET", "/v1/blobs/\(address)").body == sealed)
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 200)
        #expect(try await server.leftoverUploads() == 0)
    }

    @Test("an upload begun before the stale age but still sending is not taken for a crashed one: it completes after a collection", arguments: TestStore.available)
    func slowUploadSurvivesCollection(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        let sealed = Data(try SealedModel.seal(testBytes(12 << 20) { UInt8(truncatingIfNeeded: $0 &* 17) }, name: "m", using: .modelKey(key)))
        let address = sealed.sha256Hex
        let blobStore = try #require(server.app.blobStore)
        let upload = try await blobStore.beginUpload(for: address, by: UUID())
        // Begun more than the stale age (10 s) ago, and a part (8 MiB on S3) stored just now: the
        // collection must reach the upload within 10 s of that part, even on a loaded machine.
        try await Task.sleep(for: .seconds(12))
        var first = ByteBuffer()
        first.writeBytes(sealed.prefix(9 << 20))
        try await upload.write(first)
        try await Self.waitForAStoredPart(blobStore)
        _ = try await BlobCollector(store: blobStore, grace: 3600, staleUploadAge: 10).collect(on: server.app.db, now: Date())
        var rest = ByteBuffer()
        rest.writeBytes(sealed.dropFirst(9 << 20))
        try await upload.write(rest)
        try await upload.publish(as: address)
        #expect(try await blobStore.size(of: address) == Int64(sealed.count))
    }

    @Test("a connection cut mid-upload leaves no blob and, after collection, no part of it in the store", arguments: TestStore.available)
    func cutUpload(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) { $0.blobCollectionInterval = 0 }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        // Larger than one S3 part (8 MiB), so parts were stored before the cut.
        let sealed = Data(try SealedModel.seal(testBytes(12 << 20) { UInt8(truncatingIfNeeded: $0 &* 31) }, name: "m", using: .modelKey(key)))
        let address = sealed.sha256Hex
        let connection = try await RawConnection.connect(port: server.base.port!)
        try await connection.send("PUT /v1/teams/T/blobs/\(address) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.adminToken)\r\n"
                                  + "Content-Type: application/octet-stream\r\nContent-Length: \(sealed.count)\r\n\r\n")
        try await connection.send(bytes: sealed.prefix(10 << 20))
        await connection.close()

        let public_ = HTTP(base: server.base)
        // The server sees the cut, discards the upload (the folder's file, the multipart upload) and drops its lease.
        var leftovers = -1
        for _ in 0..<100 {
            leftovers = try await server.leftoverUploads()
            if leftovers == 0, try await UploadLeaseRecord.query(on: server.app.db).count() == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(leftovers == 0)
        #expect(try await public_.call("GET", "/v1/blobs/\(address)").status == 404)
        #expect(try await public_.call("HEAD", "/v1/blobs/\(address)").status == 404)

        // An upload a crash left behind (begun, a part written, never published nor discarded) is
        // gone after a collection that counts it stale.
        let blobStore = try #require(server.app.blobStore)
        let crashed = try await blobStore.beginUpload(for: address, by: UUID())
        var part = ByteBuffer()
        part.writeBytes(sealed.prefix(9 << 20))
        try await crashed.write(part)
        // The folder's upload file is created transactionally (an unnamed file, linked under
        // `incoming/` only when closed), so a crash leaves nothing there; the bucket holds the
        // multipart upload and its part until someone aborts it.
        if store == .s3 { #expect(try await server.leftoverUploads() > 0) }
        // Its part stored (parts are sent in the background) before the collection's moment: with
        // a stale age of 0, nothing stored since makes it stale.
        try await Self.waitForAStoredPart(blobStore)
        try await Task.sleep(for: .milliseconds(50))
        _ = try await BlobCollector(store: blobStore, grace: 3600, staleUploadAge: 0).collect(on: server.app.db, now: Date())
        #expect(try await server.leftoverUploads() == 0)
        #expect(try await public_.call("GET", "/v1/blobs/\(address)").status == 404)
        await crashed.discard()

        // The same bytes sent whole afterwards are stored and served.
        #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(address)", body: sealed).status == 201)
        #expect(try await public_.call("GET", "/v1/blobs/\(address)", headers: ["Range": "bytes=0-99"]).body == sealed.prefix(100))
    }

    /// Waits (at most 30 s) until the bucket's only unfinished multipart upload has a part stored;
    /// nothing for the folder, whose uploads are invisible until published.
    static func waitForAStoredPart(_ store: any BlobStore) async throws {
        guard let s3 = store as? S3BlobStore else { return }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let upload = try await s3.client.listMultipartUploads().first,
               try await s3.client.lastPartStored(key: upload.key, uploadID: upload.uploadID) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no part of the upload was stored within 30 s")
    }
}

import CofferServer
extension ServerConfiguration {
    var resolvedBlobDirectoryForTests: String { blobDirectory ?? dataDirectory + "/blobs" }
}
