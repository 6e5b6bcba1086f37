import BlockingTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 proxy on a loopback port in front of a real server, playing the network attacker
/// or a bad connection: it forwards each request (one per connection), and a test's rule may
/// change the answer's body, replace it, or cut it after some bytes. It logs every exchange.
final class TamperingProxy: @unchecked Sendable {
    /// One request as the proxy saw it, and what it sent back.
    struct Exchange: Sendable {
        let method: String
        let path: String
        let headers: [String: String]
        let status: Int
        /// Bytes the client sent and received on this connection (head and body).
        let bytesIn: Int
        let bytesOut: Int
    }

    /// What to do with an answer.
    enum Action: Sendable {
        case forward
        /// Replace the body (Content-Length is adjusted).
        case replaceBody(Data)
        /// Change the body's bytes in place (same length).
        case mutate(@Sendable (inout Data) -> Void)
        /// Send the head and this many body bytes, then close.
        case cut(after: Int)
        /// Answer 200 with this JSON body instead (a replayed or forged answer).
        case respond(Data)
        /// Wait this many seconds, then forward (a slow network).
        case delay(Double)
        /// Hold the answer until the gate opens, then forward (a network that stalls).
        case hold(Gate)
        /// Send the head at once and the body one byte at a time, `drip.interval` seconds apart,
        /// until the drip is released (a server or CDN that trickles: never idle, never done).
        case drip(Drip)
        /// Answer with this status and no body instead (a forged 304, say), with `Retry-After` if given.
        case status(Int, retryAfter: String? = nil)
        /// Answer with a redirect (307 unless told) to this Location instead, with a small body
        /// (object storage's presigned redirect; a hostile one sends anywhere).
        case redirect(String, status: Int = 307)
    }

    typealias Rule = @Sendable (_ method: String, _ path: String, _ headers: [String: String], _ status: Int, _ body: Data) -> Action

    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var rule: Rule = { _, _, _, _, _ in .forward }
    /// Which request headers (lower-case names) to remove before forwarding, e.g. `range` to play
    /// a server or CDN that ignores Range.
    private var requestRule: @Sendable (_ method: String, _ path: String) -> Set<String> = { _, _ in [] }
    private var exchanges: [Exchange] = []
    private var stopped = false
    private let listenerClosed = DispatchSemaphore(value: 0)

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = LoopbackSocket.address(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Sets the rule for the answers from now on.
    func setRule(_ rule: @escaping Rule) { lock.withLock { self.rule = rule } }

    /// Sets which request headers (lower-case names) are removed before forwarding, from now on.
    func setRequestRule(_ rule: @escaping @Sendable (_ method: String, _ path: String) -> Set<String>) { lock.withLock { requestRule = rule } }

    /// The exchanges so far, and forgets them.
    func takeLog() -> [Exchange] { lock.withLock { defer { exchanges = [] }; return exchanges } }

    /// Stops listening: new connections are refused from when it returns. Safe to call twice (a
    /// test may stop the proxy to play a lost network, and its `defer` stops it again).
    ///
    /// The listening socket is closed once, by the accept loop, after `shutdown` woke it: a second
    /// `close` of a descriptor number, or an `accept` on one, after the system handed that number
    /// to another file of the test process would break an unrelated test (it did: a cached blob
    /// read failed with "Bad file descriptor" and another test's proxy stopped accepting).
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        listenerClosed.wait()
    }

    private func acceptLoop() {
        defer {
            close(listener)
            listenerClosed.signal()
        }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                let code = errno
                if lock.withLock({ stopped }) || !(code == EINTR || code == ECONNABORTED || code == EMFILE || code == ENFILE) { return }
                if code == EMFILE || code == ENFILE { Thread.sleep(forTimeInterval: 0.01) }
                continue
            }
            let thread = Thread { [self] in
                serve(client)
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        guard var (head, body) = Self.readMessage(client, isResponse: false) else { return }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where line.contains(":") {
            let pair = line.split(separator: ":", maxSplits: 1)
            headers[pair[0].lowercased()] = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
        }
        // One request per connection: ask the server to close after answering.
        let dropped = lock.withLock { requestRule }(String(parts[0]), String(parts[1])).union(["connection"])
        let kept = lines.dropFirst().filter { line in
            !line.isEmpty && !dropped.contains(line.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? "")
        }
        head = Data(([String(lines[0])] + kept + ["Connection: close", "", ""]).joined(separator: "\r\n").utf8)
        let bytesIn = head.count + body.count
        guard let upstream = try? LoopbackSocket.connect(port: upstreamPort) else { return }
        defer { close(upstream) }
        guard Self.sendAll(upstream, head + body) else { return }
        guard let (responseHead, responseBody) = Self.readMessage(upstream, isResponse: true, method: String(parts[0])) else { return }
        let headText = String(decoding: responseHead, as: UTF8.self)
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        let action = lock.withLock { rule }(String(parts[0]), String(parts[1]), headers, status, responseBody)
        var outHead = responseHead, outBody = responseBody
        var cut: Int?
        var trickle: Drip?
        switch action {
        case .forward: break
        case .replaceBody(let replacement):
            outBody = replacement
            outHead = Data(headText.components(separatedBy: "\r\n").map {
                $0.lowercased().hasPrefix("content-length:") ? "Content-Length: \(replacement.count)" : $0
            }.joined(separator: "\r\n").utf8)
        case .mutate(let change):
            change(&outBody)
        case .cut(let after):
            cut = after
        case .delay(let seconds):
            Thread.sleep(forTimeInterval: seconds)
        case .hold(let gate):
            gate.wait()
        case .drip(let drip):
            trickle = drip
        case .status(let code, let retryAfter):
            let wait = retryAfter.map { "Retry-After: \($0)\r\n" } ?? ""
            outHead = Data("HTTP/1.1 \(code) Forged\r\n\(wait)Content-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            outBody = Data()
        case .redirect(let location, let code):
            outBody = parts[0] == "HEAD" ? Data() : Data("<html>moved</html>".utf8)
            outHead = Data("HTTP/1.1 \(code) Redirect\r\nLocation: \(location)\r\nCache-Control: no-store\r\nContent-Length: \(outBody.count)\r\nConnection: close\r\n\r\n".utf8)
        case .respond(let replacement):
            outHead = Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(replacement.count)\r\nConnection: close\r\n\r\n".utf8)
            outBody = replacement
        }
        let sent = outHead + (cut.map { outBody.prefix($0) } ?? outBody)
        // Logged before the answer goes out: a client that has its answer finds the exchange in the log.
        lock.withLock {
            exchanges.append(Exchange(method: String(parts[0]), path: String(parts[1]), headers: headers, status: status,
                                      bytesIn: bytesIn, bytesOut: sent.count))
        }
        if let trickle {
            Self.drip(outHead, outBody, to: client, by: trickle)
        } else {
            _ = Self.sendAll(client, sent)
        }
        body = Data()
    }

    /// Sends `head`, then `body` a byte at a time with `drip`'s pause between two, until the drip
    /// is released (the rest goes at once) or the client has gone.
    private static func drip(_ head: Data, _ body: Data, to fd: Int32, by drip: Drip) {
        drip.begin()
        guard sendAll(fd, head) else { return }
        var offset = body.startIndex
        while offset < body.endIndex {
            if drip.isReleased {
                _ = sendAll(fd, body[offset...])
                return
            }
            guard sendAll(fd, body[offset..<offset + 1]) else { return }
            offset += 1
            drip.pause()
        }
    }

    /// Reads a head (through the blank line) and a body of Content-Length bytes (a response
    /// without one is read to the end of the connection).
    private static func readMessage(_ fd: Int32, isResponse: Bool, method: String = "") -> (Data, Data)? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        let separator = Data("\r\n\r\n".utf8)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
            headEnd = buffer.range(of: separator)
        }
        let head = buffer[..<headEnd!.upperBound]
        var body = Data(buffer[headEnd!.upperBound...])
        let headText = String(decoding: head, as: UTF8.self).lowercased()
        let length = headText.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        if isResponse && (method == "HEAD" || status == 304 || status == 204) { return (Data(head), Data()) }
        if let length {
            while body.count < length {
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body.append(contentsOf: chunk[0..<count])
            }
        } else if isResponse {
            while true {
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body.append(contentsOf: chunk[0..<count])
            }
        }
        return (Data(head), body)
    }

    private static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(fd, bytes.baseAddress! + offset, bytes.count - offset, noSignal)
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    #if os(Linux)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0
    #endif
}

/// A gate proxy rules wait at until a test opens it.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    private var arrived = 0

    func wait() {
        condition.lock()
        arrived += 1
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    /// Whether an answer has come to the gate (held, or let through once it opened).
    var hasHeld: Bool {
        condition.lock()
        defer { condition.unlock() }
        return arrived > 0
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
