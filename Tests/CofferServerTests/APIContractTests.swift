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

    @Test("a body that is empty, not JSON, or JSON of the wrong shape is 400 with the JSON error body")
    func unreadableBodies() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let admin = HTTP(base: server.base, token: server.adminToken)
        let bodies: [(String, Data)] = [
            ("empty", Data()),  // Vapor answers 422 for this
            ("malformed", Data(#"{"name":"#.utf8)),
            ("wrong type", Data(#"{"name":5}"#.utf8)),
            ("huge number", Data(#"{"name":1e999999}"#.utf8)),
            ("null", Data("null".utf8)),
            ("array", Data("[]".utf8)),
            ("lone surrogate", Data(#"{"name":"a\ud800b"}"#.utf8)),
            ("invalid UTF-8", Data([0x7B, 0x22, 0x6E, 0x61, 0x6D, 0x65, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D])),
            ("control character", Data(#"{"name":"a\u0000b"}"#.utf8)),
            ("deeply nested", Data((String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)).utf8)),
        ]
        for (what, body) in bodies {
            let reply = try await admin.call("POST", "/v1/teams", body: body, headers: ["Content-Type": "application/json"])
            #expect(reply.status == 400, "\(what): \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
            #expect(reply.errorCode == "invalid_request", "\(what)")
            #expect(reply.object["reason"] is String, "\(what)")
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true, "\(what)")
        }
    }

    @Test("a form or plain-text body on the JSON API is 415 and changes nothing; an empty one is not refused for its type")
    func nonJSONBodies() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.stop() } }
        let admin = HTTP(base: server.base, token: server.adminToken)
        for (type, body) in [("application/x-www-form-urlencoded", "name=formteam"), ("text/plain; charset=utf-8", #"{"name":"plainteam"}"#),
                             ("application/x-www-form-urlencoded", "")] {
            let reply = try await admin.call("POST", "/v1/teams", body: Data(body.utf8), headers: ["Content-Type": type])
            #expect(reply.status == (body.isEmpty ? 400 : 415), "\(type): \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))")
            #expect(reply.errorCode == "invalid_request")
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
        }
        let teams = try await admin.call("GET", "/v1/teams").array.compactMap { $0["name"] as? String }
        #expect(teams.isEmpty, "created from a non-JSON body: \(teams)")
        // A POST that takes no body is not refused for the label curl -d '' puts on an empty one.
        #expect(try await admin.call("POST", "/v1/teams", json: ["name": "T"]).status == 201)
        let app = try await World(server).app(in: "T")
        let rotated = try await admin.call("POST", "/v1/teams/T/apps/\(app.id)/credential", body: Data(),
                                           headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(rotated.status == 200)
    }
}
