import CofferAsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Coffer

/// Blob downloads answered with a redirect, as a server with `COFFER_S3_PRESIGN=1` answers them: a
/// proxy in front of the real server (`front`) answers blob GETs with 307 and a presigned-looking
/// Location on a second proxy in front of the same server (`store`), which serves the bytes with
/// Range and records the headers it was sent. Both forward everything else.
@Suite("Blob downloads follow a redirect, without credentials, and verify as always")
struct BlobRedirectTests {
    /// The redirecting host and the store it sends blob requests to.
    struct Hosts {
        let front: TamperingProxy
        let store: TamperingProxy

        init(upstreamPort: Int) throws {
            store = try TamperingProxy(upstreamPort: upstreamPort)
            front = try TamperingProxy(upstreamPort: upstreamPort)
            front.setRule(BlobRedirectTests.redirectingBlobs(to: store.url))
        }

        func stop() {
            front.stop()
            store.stop()
        }
    }

    /// A rule that answers each blob GET with 307 to the same path on `host`, with a query as a
    /// presigned URL has, and forwards everything else.
    static func redirectingBlobs(to host: String) -> TamperingProxy.Rule {
        { method, path, _, _, _ in
            method == "GET" && path.hasPrefix("/v1/blobs/") ? .redirect(host + path + "?X-Amz-Signature=presigned") : .forward
        }
    }

    /// A rule that flips one bit of each blob answer (a store that serves other bytes).
    static let damagingBlobs: TamperingProxy.Rule = { method, path, _, _, _ in
        guard method == "GET", path.hasPrefix("/v1/blobs/") else { return .forward }
        return .mutate { body in if body.count > 5000 { body[body.startIndex + 5000] ^= 0x01 } }
    }

    static func blobGets(_ log: [TamperingProxy.Exchange]) -> [TamperingProxy.Exchange] {
        log.filter { $0.method == "GET" && $0.path.hasPrefix("/v1/blobs/") }
    }

    @Test("a sync follows the redirect to the store, which sees no credential; a cut download resumes there with Range",
          arguments: SDKFleet.Transport.allCases)
    func syncAndResumeThroughRedirect(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let hosts = try Hosts(upstreamPort: fleet.session.server.port)
        defer { hosts.stop() }
        // The store cuts every model answer after 50 000 bytes: the first try fails (no retries).
        hosts.store.setRule { method, path, _, _, _ in
            method == "GET" && path.hasPrefix("/v1/blobs/") ? .cut(after: 50_000) : .forward
        }
        let cache = fleet.folder("redirect-cache")
        let configuration = try fleet.configuration(cache, server: hosts.front.url, retries: 1, transport: transport)
        await #expect {
            _ = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .offline) = error as? CofferError else { return false }
            return true
        }
        let partName = try #require(SDKFleet.names(cache, "staging").first)
        let partPath = cache.path + "/collections/FlowerModels/staging/" + partName
        let partSize = try #require(try FileManager.default.attributesOfItem(atPath: partPath)[.size] as? Int)
        #expect(partSize > 0 && partSize <= 50_000)
        _ = hosts.front.takeLog()
        _ = hosts.store.takeLog()
        hosts.store.setRule { _, _, _, _, _ in .forward }

        // The next access resumes at the store where the cut left it, and downloads the other model there.
        let collection = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(collection.origin == .server && collection.sequence == 1)
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        #expect(try await collection.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        #expect(SDKFleet.names(cache, "staging").isEmpty)

        let asked = Self.blobGets(hosts.front.takeLog())
        let served = Self.blobGets(hosts.store.takeLog())
        #expect(asked.count == 2 && served.count == 2, "front \(asked.map(\.path)), store \(served.map(\.path))")
        #expect(served.allSatisfy { $0.path.hasSuffix("?X-Amz-Signature=presigned") && $0.status == 206 })
        let resumed = served.first { $0.path.contains(String(partName.prefix(64))) }
        #expect(resumed?.headers["range"]?.hasPrefix("bytes=\(partSize)-") == true, "\(String(describing: resumed?.headers))")
        // The same Range the server was asked for, and nothing that names the app or the device.
        #expect(Set(served.map { $0.headers["range"] }) == Set(asked.map { $0.headers["range"] }))
        for exchange in served {
            #expect(exchange.headers["authorization"] == nil && exchange.headers["cookie"] == nil, "\(exchange.headers)")
            #expect(!exchange.headers.values.contains { $0.contains(fleet.flowers.credential) })
        }
    }

    @Test("a delta update asks each run of missing chunks through the redirect, with its Range, and opens exactly N+1")
    func deltaThroughRedirect() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let (_, next) = try await DeltaSyncTests.versions(fleet)
        let cli = fleet.session.cli
        let hosts = try Hosts(upstreamPort: fleet.session.server.port)
        defer { hosts.stop() }
        try await fleet.deploy("n", classifier: "n")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("n1", classifier: "n1")
        _ = hosts.front.takeLog()
        _ = hosts.store.takeLog()

        let synced = try await fleet.sync("edge", server: hosts.front.url)
        #expect(synced.status == 0, "\(synced.stderr)")
        let asked = Self.blobGets(hosts.front.takeLog())
        let served = Self.blobGets(hosts.store.takeLog())
        // The header first, then a few runs of chunks: each asked of the server, each served by the store.
        #expect(served.count >= 2 && served.count <= 8 && asked.count == served.count, "front \(asked.count), store \(served.count)")
        #expect(served.map { $0.headers["range"] } == asked.map { $0.headers["range"] })
        #expect(served.allSatisfy { $0.status == 206 && $0.headers["authorization"] == nil })
        try DeltaSyncTests.expectDelta(served.reduce(0) { $0 + $1.bytesOut }, requests: served.count,
                                       from: try #require(cli.read("n.coffer")), to: try #require(cli.read("n1.coffer")))
        let opened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdoutBytes == next)
    }

    @Test("a redirect loop, a file: URL and other bytes at the store are refused; nothing is kept; the next access completes",
          arguments: SDKFleet.Transport.allCases)
    func refusedRedirects(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let hosts = try Hosts(upstreamPort: fleet.session.server.port)
        defer { hosts.stop() }
        let cache = fleet.folder("refused-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: hosts.front.url, transport: transport))
        func failure() async -> UnavailableCause? {
            do {
                _ = try await client.beginAccessing(identifier: "FlowerModels")
                return nil
            } catch {
                guard case .collectionUnavailable(_, let cause) = error as? CofferError else { return nil }
                return cause
            }
        }

        // A loop: the front redirects to itself. One request and three hops, then a refusal, not tried again.
        hosts.front.setRule(Self.redirectingBlobs(to: hosts.front.url))
        let loop = await failure()
        #expect(loop == .server(status: 307, code: "redirect_refused", reason: "the blob request was redirected more than 3 times"),
                "\(String(describing: loop))")
        #expect(Self.blobGets(hosts.front.takeLog()).count == 1 + BlobRedirect.maximumHops)

        // Away from http(s).
        hosts.front.setRule { method, path, _, _, _ in
            method == "GET" && path.hasPrefix("/v1/blobs/") ? .redirect("file:///etc/passwd") : .forward
        }
        let file = await failure()
        #expect(file == .server(status: 307, code: "redirect_refused", reason: "a redirect to a file: URL"), "\(String(describing: file))")

        // A store that serves other bytes: the SHA-256 check refuses them, and the part file goes.
        hosts.front.setRule(Self.redirectingBlobs(to: hosts.store.url))
        hosts.store.setRule(Self.damagingBlobs)
        let other = await failure()
        guard case .modelRefused(_, let reason)? = other else {
            Issue.record("not refused as a model: \(String(describing: other))")
            return
        }
        #expect(reason.contains("SHA-256"))
        #expect(!Self.blobGets(hosts.store.takeLog()).isEmpty)
        #expect(SDKFleet.names(cache, "staging").isEmpty)
        #expect(SDKFleet.names(cache, "blobs").isEmpty)

        hosts.store.setRule { _, _, _, _, _ in .forward }
        let collection = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(collection.origin == .server)
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
    }

    @Test("the request to a redirect's target is made afresh: Range and Accept-Encoding, no Authorization, credential or cookie",
          arguments: SDKFleet.Transport.allCases)
    func targetGetsNoCredentials(transport: SDKFleet.Transport) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        let bytes = CLI.randomData(100_000)
        cli.write("blob", bytes)
        guard let origin = await RangeIgnoringHost.start("ignore-range", serving: cli.path("blob")) else { return }
        defer { origin.stop() }
        let hosts = try Hosts(upstreamPort: try #require(URL(string: origin.url)?.port))
        defer { hosts.stop() }
        var request = URLRequest(url: try #require(URL(string: hosts.front.url + "/v1/blobs/" + String(repeating: "ab", count: 32))))
        request.timeoutInterval = 60
        request.setValue("bytes=0-99999", forHTTPHeaderField: "Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue("Bearer cft_secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=secret", forHTTPHeaderField: "Cookie")
        request.setValue("secret", forHTTPHeaderField: "X-Coffer-Credential")
        let chosen: any CofferTransport = transport == .urlSession ? DeviceTransport(timeout: 60) : AsyncHTTPClientTransport(timeout: 60)
        let body = Received()
        let response = try await BlobRedirect.stream(request, through: chosen) { _, piece in body.add(piece) }
        #expect(response.statusCode == 200)
        #expect(body.data == bytes)

        let asked = try #require(hosts.front.takeLog().first)
        #expect(asked.headers["authorization"] == "Bearer cft_secret")
        let served = hosts.store.takeLog()
        #expect(served.count == 1)
        let headers = try #require(served.first?.headers)
        #expect(headers["range"] == "bytes=0-99999")
        #expect(headers["accept-encoding"] == "identity")
        #expect(headers["authorization"] == nil && headers["cookie"] == nil && headers["x-coffer-credential"] == nil, "\(headers)")
        #expect(!headers.values.contains { $0.contains("secret") }, "\(headers)")
    }

    @Test("where a redirect may lead: http(s) with a host, no user or password, never from https to http")
    func targets() throws {
        let https = try #require(URL(string: "https://coffer.example/v1/blobs/abc"))
        let http = try #require(URL(string: "http://127.0.0.1:8080/v1/blobs/abc"))
        func target(_ location: String?, from url: URL) -> Result<String, BlobRedirect.Refusal> {
            Result { () throws(BlobRedirect.Refusal) in try BlobRedirect.target(of: location, from: url, status: 307).absoluteString }
        }
        func refusal(_ reason: String) -> Result<String, BlobRedirect.Refusal> { .failure(.init(status: 307, reason: reason)) }

        #expect(target("https://store.example/b/abc?X-Amz-Signature=1", from: https) == .success("https://store.example/b/abc?X-Amz-Signature=1"))
        #expect(target("/store/abc", from: https) == .success("https://coffer.example/store/abc"))
        #expect(target("//cdn.example/abc", from: https) == .success("https://cdn.example/abc"))
        #expect(target("http://127.0.0.1:9000/abc", from: http) == .success("http://127.0.0.1:9000/abc"))
        #expect(target("https://store.example/abc", from: http) == .success("https://store.example/abc"))

        #expect(target("http://store.example/abc", from: https) == refusal("a redirect from https to http"))
        #expect(target("HTTP://store.example/abc", from: https) == refusal("a redirect from https to http"))
        #expect(target("file:///etc/passwd", from: http) == refusal("a redirect to a file: URL"))
        #expect(target("ftp://store.example/abc", from: https) == refusal("a redirect to a ftp: URL"))
        #expect(target("javascript:alert(1)", from: https) == refusal("a redirect to a javascript: URL"))
        #expect(target(nil, from: https) == refusal("a redirect without a Location"))
        #expect(target("", from: https) == refusal("a redirect without a Location"))
        for garbled in ["https://store.example/a b", "https://store.example/\u{7F}", "https://störe.example/", "https://store.example/\r\nX: y",
                        "https:///abc", "http://[::1/abc"] {
            #expect(target(garbled, from: https) == refusal("a redirect to an unusable Location"), "\(garbled)")
        }
        #expect(target("https://user:pass@store.example/abc", from: https) == refusal("a redirect to a URL with a user name or password"))
        #expect(target("https://user@store.example/abc", from: https) == refusal("a redirect to a URL with a user name or password"))
    }

    @Test("coffer blob download follows the redirect without the token; the HEAD and other commands still report one")
    func cliBlobDownload() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let hosts = try Hosts(upstreamPort: fleet.session.server.port)
        defer { hosts.stop() }
        let session = fleet.session
        let token = session.server.token
        let address = try #require(fleet.flowers.sha["classifier"])
        let sealed = try #require(session.cli.read("classifier.coffer"))

        let result = try await session.coffer(["blob", "download", address, "-o", "copy.coffer"], token: token, server: hosts.front.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(session.cli.read("copy.coffer") == sealed)
        let asked = Self.blobGets(hosts.front.takeLog())
        let served = Self.blobGets(hosts.store.takeLog())
        #expect(asked.count == 1 && served.count == 1, "front \(asked.map(\.path)), store \(served.map(\.path))")
        // Blobs are public: the token goes to neither host.
        for exchange in asked + served {
            #expect(exchange.headers["range"] == "bytes=0-\(sealed.count - 1)")
            #expect(exchange.headers["authorization"] == nil, "\(exchange.headers)")
            #expect(!exchange.headers.values.contains { $0.contains(token) })
        }

        // coffer sync follows it too (the SDK's download).
        let synced = try await fleet.sync("sync-cache", server: hosts.front.url)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(Self.blobGets(hosts.store.takeLog()).count == 2)
        #expect(Self.blobGets(hosts.front.takeLog()).count == 2)

        // A store that serves other bytes: refused by the address, nothing written.
        hosts.store.setRule(Self.damagingBlobs)
        let other = try await session.coffer(["blob", "download", address, "-o", "other.coffer"], token: token, server: hosts.front.url)
        #expect(other.status == 65, "\(other.stderr)")
        #expect(other.stderr.contains("nothing was written"), "\(other.stderr)")
        #expect(session.cli.read("other.coffer") == nil)

        // A loop is refused in one line (exit 76).
        hosts.front.setRule(Self.redirectingBlobs(to: hosts.front.url))
        _ = hosts.front.takeLog()
        let loop = try await session.coffer(["blob", "download", address, "-o", "loop.coffer"], token: token, server: hosts.front.url)
        #expect(loop.status == 76)
        #expect(loop.stderr == "coffer: \(hosts.front.url): the blob request was redirected more than 3 times; not followed (HTTP 307)\n",
                "\(loop.stderr)")
        #expect(Self.blobGets(hosts.front.takeLog()).count == 1 + BlobRedirect.maximumHops)

        // Everything else reports a redirect as before, and sends nothing to where it points.
        let elsewhere = hosts.store.url + "/elsewhere"
        hosts.front.setRule { _, _, _, _, _ in .redirect(elsewhere) }
        _ = hosts.store.takeLog()
        let head = try await session.coffer(["blob", "download", address, "-o", "head.coffer"], token: token, server: hosts.front.url)
        #expect(head.status == 76 && head.stderr.contains("redirects to \(elsewhere)"), "\(head.stderr)")
        let teams = try await session.coffer(["team", "list"], token: token, server: hosts.front.url)
        #expect(teams.status == 76 && teams.stderr.contains("redirects to \(elsewhere)"), "\(teams.stderr)")
        #expect(hosts.store.takeLog().isEmpty)
    }
}

/// A body gathered from a transport's callbacks.
private final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()

    func add(_ piece: Data) { lock.withLock { bytes.append(piece) } }
    var data: Data { lock.withLock { bytes } }
}
