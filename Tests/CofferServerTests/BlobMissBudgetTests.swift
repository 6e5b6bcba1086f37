import CofferFormat
import Foundation
import Testing

@testable import CofferServer

/// The anonymous blob routes and addresses the store does not have. Each such request asked the
/// store (with an object store, a billed HEAD on the connection pool every team's downloads share)
/// without any budget; now each 404 costs the client's address one miss of
/// COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE, and past it an address this instance has not served
/// with no record in the database is answered 429 before the store is asked (and past as many
/// look-ups of records, any address this instance has not served).
@Suite("Blob requests for addresses the store does not have")
struct BlobMissBudgetTests {
    @Test("past an address's miss budget: 429 with Retry-After before the store is asked; registered blobs are still served; other addresses keep theirs",
          arguments: TestStore.available)
    func missBudget(store: TestStore) async throws {
        let server = try await TestServer.start(store: store) {
            $0.blobMissesPerAddressPerMinute = 3
            $0.trustedProxies = "127.0.0.1, ::1"
        }
        defer { Task { try? await server.stop() } }
        let world = World(server)
        try await world.team("T")
        let key = try await world.key(in: "T")
        func upload(_ name: String) async throws -> (Data, String) {
            let sealed = Data(try SealedModel.seal(Array(name.utf8) + [UInt8](repeating: 7, count: 5000), name: name, using: .modelKey(key)))
            #expect(try await world.admin.call("PUT", "/v1/teams/T/blobs/\(sealed.sha256Hex)", body: sealed).status == 201)
            return (sealed, sealed.sha256Hex)
        }
        let (served, servedAddress) = try await upload("served")
        let (notYetServedBytes, notYetServed) = try await upload("not-yet-served")
        let (_, third) = try await upload("third")

        let http = HTTP(base: server.base)
        let flooder = ["X-Forwarded-For": "198.51.100.7"]
        func missing() -> String { Data(UUID().uuidString.utf8).sha256Hex }
        #expect(try await http.call("GET", "/v1/blobs/\(servedAddress)", headers: flooder).body == served)
        for attempt in 1...2 {
            #expect(try await http.call("GET", "/v1/blobs/\(missing())", headers: flooder).status == 404, "GET miss \(attempt)")
        }
        #expect(try await http.call("HEAD", "/v1/blobs/\(missing())", headers: flooder).status == 404, "a HEAD miss counts too")

        // The budget is spent. An address the store does not have is refused without asking it:
        // 429, where asking would have said 404 (each of these two costs a look-up of its record,
        // of the three the address may make past its misses).
        let refused = try await http.call("GET", "/v1/blobs/\(missing())", headers: flooder)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rate_limited")
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 > 0, "\(refused.headers)")
        #expect(refused.header("Cache-Control") == "no-store", "a CDN must not keep the refusal for the blob's year")
        #expect(try await http.call("HEAD", "/v1/blobs/\(missing())", headers: flooder).status == 429)
        // Blobs with a record are still served, whole and by range — devices behind one CDN or
        // NAT with a flood get the models their deployments name: one this instance has not
        // served yet (its record is looked up: the third look-up)…
        let first = try await http.call("GET", "/v1/blobs/\(notYetServed)", headers: flooder)
        #expect(first.status == 200 && first.body == notYetServedBytes)
        #expect(try await http.call("HEAD", "/v1/blobs/\(notYetServed)", headers: flooder).status == 200)
        // …and one it has.
        let again = try await http.call("GET", "/v1/blobs/\(servedAddress)", headers: flooder)
        #expect(again.status == 200)
        #expect(again.body == served)
        let range = try await http.call("GET", "/v1/blobs/\(servedAddress)", headers: flooder.merging(["Range": "bytes=0-9"]) { $1 })
        #expect(range.status == 206)
        #expect(range.body == served.prefix(10))
        // Past the look-ups too, the database is not asked either: a blob with a record that this
        // instance has not served is 429 as well (the bound on what a flood costs), remembered
        // ones are still served.
        #expect(try await http.call("GET", "/v1/blobs/\(third)", headers: flooder).status == 429)
        #expect(try await http.call("GET", "/v1/blobs/\(missing())", headers: flooder).status == 429)
        #expect(try await http.call("HEAD", "/v1/blobs/\(notYetServed)", headers: flooder).status == 200)

        // Another client address has its own budget: its miss is a 404, its download a 200.
        let neighbour = ["X-Forwarded-For": "203.0.113.9"]
        #expect(try await http.call("GET", "/v1/blobs/\(missing())", headers: neighbour).status == 404)
        #expect(try await http.call("GET", "/v1/blobs/\(third)", headers: neighbour).status == 200)
    }
}
