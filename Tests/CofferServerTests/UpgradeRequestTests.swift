import Foundation
import Testing

@testable import CofferServer

/// A request that asks to switch protocols (`CONNECT`, or an `Upgrade` header) makes NIO's HTTP
/// parser stop for good: every byte after it is kept unparsed, in a buffer nothing bounds, while
/// each read resets the idle timeout. No route of Coffer switches protocols, so such a request is
/// answered and its connection closes, on both ports.
@Suite("Requests to switch protocols")
struct UpgradeRequestTests {
    static let requests = [
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
        "GET /v1/device/collections/FlowerModels/manifest?deviceID=a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: h2c\r\n\r\n",
    ]

    @Test("answered, then the connection closes — on the device port and the main port", arguments: [true, false])
    func answeredAndClosed(devicePort: Bool) async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = devicePort ? try #require(server.app.storage[DeviceListener.Key.self]?.port) : server.base.port!
        for request in Self.requests {
            let connection = try await RawConnection.connect(port: port)
            try await connection.send(request)
            let (text, closed) = try await connection.wait(seconds: 20) { _ in false }
            #expect(RawConnection.statuses(text) == [400], "\(request.prefix(30)): \(text.prefix(200))")
            #expect(text.contains("protocol_switch_refused"), "\(text.prefix(300))")
            #expect(closed, "\(request.prefix(30)): the connection stays open after \(text.prefix(60))")
            await connection.close()
        }
    }

    @Test("bytes sent behind one are not kept: the connection closes long before 8 MiB", arguments: [true, false])
    func bytesBehindAreNotKept(devicePort: Bool) async throws {
        let server = try await TestServer.start { $0.devicePort = 0 }
        defer { Task { try? await server.stop() } }
        let port = devicePort ? try #require(server.app.storage[DeviceListener.Key.self]?.port) : server.base.port!
        let connection = try await RawConnection.connect(port: port)
        try await connection.send(Self.requests[0])
        var sent = 0
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        while sent < 8 << 20 {
            do { try await connection.send(bytes: piece) } catch { break }
            sent += piece.count
            if try await connection.wait(seconds: 0) { _ in false }.closed { break }
        }
        let (_, closed) = try await connection.wait(seconds: 20) { _ in false }
        #expect(closed, "the server still reads after \(sent) bytes behind a CONNECT")
        await connection.close()
    }
}
