import Foundation
import Testing

/// What tools/schemathesis/run.sh found when it held the server to docs/openapi.json, one test per
/// finding, over real HTTP: every answer is a documented status with the JSON error body, and no
/// client input is answered with 5xx.
@Suite("API contract")
struct APIContractTests {
    @Test("a wrong method on a known path is 405 with Allow and the JSON error body")
    func methodNotAllowed() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let admin = HTTP(base: server.base, token: server.adminToken)
        let blob = String(repeating: "ab", count: 32)
        let cases: [(method: String, path: String, allow: String)] = [
            ("DELETE", "/v1/teams", "GET, HEAD, POST"),
            ("PUT", "/v1/teams/T/members", "GET, HEAD, POST"),
            ("GET", "/v1/teams/T/blobs/\(blob)", "PUT"),
            ("POST", "/v1/blobs/\(blob)", "GET, HEAD"),
            ("OPTIONS", "/openapi.json", "GET, HEAD"),
            ("PATCH", "/v1/keys/k1", "DELETE"),
            ("GET", "/v1/teams/T/collections/C/deployments/\(UUID())/activate", "POST"),
            ("DELETE", "//v1//teams/", "GET, HEAD, POST"),  // empty segments are dropped, as the router does
        ]
        for item in cases {
            let reply = try await admin.call(item.method, item.path)
            #expect(reply.status == 405, "\(item.method) \(item.path): \(reply.status)")
            #expect(reply.header("Allow") == item.allow, "\(item.method) \(item.path)")
            #expect(reply.errorCode == "method_not_allowed")
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
        }
    }

    @Test("a path no route has, and a route's own not found, stay 404; HEAD is served where GET is")
    func notFoundStays() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let admin = HTTP(base: server.base, token: server.adminToken)
        for (method, path) in [("GET", "/v1/nothing"), ("DELETE", "/v1/teams/T/members/a/b"), ("GET", "/v1/teams/nobody/members"),
                               ("DELETE", "/v1/keys/unknown")] {
            let reply = try await admin.call(method, path)
            #expect(reply.status == 404, "\(method) \(path): \(reply.status)")
            #expect(reply.errorCode == "not_found")
            #expect(reply.header("Allow") == nil)
        }
        #expect(try await admin.call("HEAD", "/v1/signing-key").status == 200)
    }
}
