@testable import Coffer
import CofferFormat
import Crypto
import Foundation
import S3TestSupport
import Testing

/// The `Coffer` SDK in this process against a real `coffer-server`: the three cases teams saw fail
/// with Apple's service, offline use, and what the SDK refuses.
@Suite("Coffer SDK against a real server")
struct SDKTests {
    @Test("first launch downloads; a new deployment arrives on the next access; a reinstall downloads again",
          arguments: ServerBlobStore.available)
    func firstLaunchUpdateReinstall(store: ServerBlobStore) async throws {
        let (environment, bucket) = try await store.serverEnvironment()
        defer { if let bucket { Task { await S3TestGateway.removeBucket(bucket) } } }
        guard let fleet = try await SDKFleet(environment: environment) else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("app-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, policy: .useCachedAndUpdateInBackground))

        // (a) First launch: nothing cached, so the access waits for the download.
        let first = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(first.origin == .server)
        #expect(first.sequence == 1)
        #expect(Set(first.entries.keys) == ["FlowerClassifier", "FlowerStylizer"])
        let classifier = try #require(first.entries["FlowerClassifier"])
        #expect(try await classifier.data() == fleet.plain["classifier"])
        #expect(try await first.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])
        #expect(classifier.sha256 == fleet.flowers.sha["classifier"])
        // Sealed at rest: the cached file is the sealed container, byte for byte.
        #expect(FileManager.default.contents(atPath: classifier.modelURL.path) == fleet.session.cli.read("classifier.coffer"))
        // A path for runtimes that need one: a memory file, gone afterwards.
        let path = try await classifier.withDecryptedFile { url -> String in
            #expect(url.path.hasPrefix("/proc/self/fd/"))
            #expect(FileManager.default.contents(atPath: url.path) == fleet.plain["classifier"])
            return url.path
        }
        #expect(!FileManager.default.fileExists(atPath: path) || FileManager.default.contents(atPath: path) != fleet.plain["classifier"])
        // A range, decrypted on demand.
        let reader = try await classifier.reader()
        #expect(try reader.read(1000..<5000) == fleet.plain["classifier"]?.subdata(in: 1000..<5000))

        // (b) A new deployment is activated; the next access serves the cache and updates in the background.
        let updates = client.updates(identifier: "FlowerModels")
        try await fleet.deploy("summer", classifier: "classifier-large")
        let second = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(second.origin == .cache(staleBecause: nil))
        #expect(second.sequence == 1)
        let announced = try await SDKFleet.within(600) {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(announced?.sequence == 2)
        #expect(try await announced?.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        let third = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(third.sequence == 2 && third.deploymentID == announced?.deploymentID)
        #expect(third.entries["FlowerClassifier"]?.sha256 == fleet.flowers.sha["classifier-large"])
        // The old classifier stays while it is accessed, and goes when the accesses end.
        #expect(SDKFleet.names(cache, "blobs").contains(fleet.flowers.sha["classifier"]! + ".coffer"))
        await client.endAccessing(identifier: "FlowerModels")
        #expect(SDKFleet.names(cache, "blobs") == [fleet.flowers.sha["classifier-large"]! + ".coffer", fleet.flowers.sha["stylizer"]! + ".coffer"])

        // (c) A reinstall: the cache (and the key store in it) is gone; the collection downloads again.
        // The old client's background check (started by the third access) ends first, as the old
        // app's process would have: else it works on the new client's folder without its lock (the
        // lock file went with the folder) and can remove the new download's part file.
        await client.hub.settled("FlowerModels")
        try FileManager.default.removeItem(at: cache)
        let reinstalled = try CofferClient(configuration: fleet.configuration(cache, policy: .useCachedAndUpdateInBackground))
        let fresh = try await reinstalled.beginAccessing(identifier: "FlowerModels")
        #expect(fresh.origin == .server)
        #expect(fresh.sequence == 2)
        #expect(try await fresh.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
    }

    @Test("failed updates are announced on updateFailures with their cause, in the background too; the cache keeps serving")
    func updateFailures() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("failing-cache")
        _ = try await CofferClient(configuration: fleet.configuration(cache)).beginAccessing(identifier: "FlowerModels")

        // A background check the server refuses: the access serves the cache at once, and the
        // cause arrives on the stream instead of vanishing.
        var refused = try fleet.configuration(cache, policy: .useCachedAndUpdateInBackground)
        refused.credential = "not-the-app-credential"
        let client = try CofferClient(configuration: refused)
        let failures = client.updateFailures(identifier: "FlowerModels")
        let served = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(served.origin == .cache(staleBecause: nil))
        let cause = try await SDKFleet.within(600) {
            var iterator = failures.makeAsyncIterator()
            return await iterator.next()
        }
        guard case .server(let status, let code, _)? = cause else {
            Issue.record("expected the server's refusal, got \(String(describing: cause))")
            return
        }
        #expect(status == 401 && code == "invalid_credential")
        #expect(!"\(cause!)".contains("not-the-app-credential"), "the cause names the credential")

        // A waiting access to an unreachable server: the cache, stale, and the same cause announced.
        let dead = try CofferClient(configuration: fleet.configuration(cache, server: "http://127.0.0.1:\(try AdminServer.freePort())"))
        let offline = dead.updateFailures(identifier: "FlowerModels")
        let stale = try await dead.beginAccessing(identifier: "FlowerModels")
        let announced = try await SDKFleet.within(600) {
            var iterator = offline.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(stale.origin == .cache(staleBecause: announced))
        guard case .offline? = announced else {
            Issue.record("expected offline, got \(String(describing: announced))")
            return
        }
    }

    @Test("offline: bundled models with nothing cached, the cache once there is one; the next check replaces the bundled models")
    func offline() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let dead = "http://127.0.0.1:\(try AdminServer.freePort())"
        let cache = fleet.folder("offline-cache")
        let bundledPlain = CLI.randomData(5000)
        fleet.session.cli.write("bundled.bin", bundledPlain)
        var configuration = try fleet.configuration(cache, server: dead)
        configuration.bundledModels = [
            "FlowerClassifier": BundledModel(url: URL(fileURLWithPath: fleet.session.cli.path("bundled.bin")), version: "1.0"),
            "FlowerStylizer": BundledModel(url: URL(fileURLWithPath: fleet.session.cli.path("stylizer.coffer"))),
            "Damaged": BundledModel(url: URL(fileURLWithPath: fleet.session.cli.path("damaged.coffer"))),
        ]
        // A container whose header cannot be read (version 99): still sealed, never served as its ciphertext.
        var damaged = try #require(fleet.session.cli.read("stylizer.coffer"))
        damaged[damaged.startIndex + 8] = 99
        fleet.session.cli.write("damaged.coffer", damaged)

        // Nothing cached, server unreachable: the bundled models.
        let bundled = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(bundled.origin.isOfflineFallback)
        #expect(bundled.deploymentID == nil)
        #expect(bundled.entries["FlowerClassifier"]?.isSealed == false)
        #expect(bundled.entries["FlowerClassifier"]?.version == "1.0")
        #expect(try await bundled.entries["FlowerClassifier"]?.data() == bundledPlain)
        #expect(bundled.entries["FlowerStylizer"]?.isSealed == true)
        #expect(bundled.entries["Damaged"]?.isSealed == true)
        await #expect {
            _ = try await bundled.entries["Damaged"]?.data()
        } throws: { error in
            guard case .modelInvalid(name: "Damaged", _) = error as? CofferError else { return false }
            return true
        }
        // A sealed bundled model needs its key, which cannot be fetched offline.
        await #expect {
            _ = try await bundled.entries["FlowerStylizer"]?.data()
        } throws: { error in
            guard case .keyFetchFailed = error as? CofferError else { return false }
            return true
        }

        // Online again: the next check replaces the bundled models.
        configuration.serverURL = URL(string: fleet.server)!
        let online = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(online.origin == .server)
        #expect(try await online.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])

        // Offline with a cache: the cache, and its keys open the models without the server.
        configuration.serverURL = URL(string: dead)!
        let cached = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        #expect(cached.origin.isOfflineFallback)
        #expect(cached.sequence == 1)
        #expect(try await cached.entries["FlowerStylizer"]?.data() == fleet.plain["stylizer"])

        // Cache only, with nothing cached and nothing bundled: unavailable, saying why.
        var cacheOnly = try fleet.configuration(fleet.folder("empty-cache"), server: dead, policy: .cachedOnly)
        cacheOnly.bundledModels = [:]
        await #expect(throws: CofferError.collectionUnavailable(identifier: "FlowerModels", cause: .notCached)) {
            _ = try await CofferClient(configuration: cacheOnly).beginAccessing(identifier: "FlowerModels")
        }
    }

    @Test("a cut download resumes with Range; concurrent accesses share one download; an unchanged check is one small 304",
          arguments: SDKFleet.Transport.allCases)
    func resumeShareAndUnchanged(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        // Every model download is cut off after 50 000 bytes (URLSession may try a request again itself).
        proxy.setRule { method, path, _, _, _ in
            method == "GET" && path.hasPrefix("/v1/blobs/") ? .cut(after: 50_000) : .forward
        }
        let cache = fleet.folder("resume-cache")
        let configuration = try fleet.configuration(cache, server: proxy.url, retries: 1, transport: transport)

        // The first try is cut off after 50 000 bytes of the first model and fails (no retries).
        await #expect {
            _ = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .offline) = error as? CofferError else { return false }
            return true
        }
        let parts = SDKFleet.names(cache, "staging")
        #expect(parts.count == 1)
        let partName = try #require(parts.first)
        let partSize = try #require(try FileManager.default.attributesOfItem(atPath: cache.path + "/collections/FlowerModels/staging/" + partName)[.size] as? Int)
        #expect(partSize > 0 && partSize <= 50_000)
        #expect(SDKFleet.names(cache, "blobs").isEmpty)
        _ = proxy.takeLog()
        proxy.setRule { _, _, _, _, _ in .forward }

        // Two accesses at once share one download, which resumes where the cut left it.
        let client = try CofferClient(configuration: configuration)
        async let one = client.beginAccessing(identifier: "FlowerModels")
        async let two = client.beginAccessing(identifier: "FlowerModels")
        let (a, b) = try await (one, two)
        #expect(a.sequence == 1 && b.sequence == 1 && a.deploymentID == b.deploymentID)
        #expect(try await a.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        let log = proxy.takeLog()
        let blobGets = log.filter { $0.method == "GET" && $0.path.hasPrefix("/v1/blobs/") }
        #expect(blobGets.count == 2, "\(log.map(\.path))")
        #expect(Set(blobGets.map(\.path)).count == 2)
        let resumed = blobGets.first { $0.path.contains(String(partName.prefix(64))) }
        #expect(resumed?.headers["range"]?.hasPrefix("bytes=\(partSize)-") == true, "\(String(describing: resumed?.headers))")
        #expect(log.filter { $0.path.contains("/manifest") }.count == 1)
        #expect(SDKFleet.names(cache, "staging").isEmpty)

        // Unchanged: one conditional request, answered 304, under 2 KiB both ways, no model bytes.
        let again = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(again.origin == .server && again.sequence == 1)
        // Reports go in the background (5 s after the downloads that queued them): on a loaded machine
        // that send can fall in this window. It is not part of the check; every other request is.
        let check = proxy.takeLog().filter { !$0.path.hasPrefix("/v1/device/reports") }
        #expect(check.count == 1, "\(check.map(\.path))")
        #expect(check.first?.path.contains("/manifest") == true)
        #expect(check.first?.headers["if-none-match"] != nil)
        #expect(check.first?.status == 304)
        #expect((check.first.map { $0.bytesIn + $0.bytesOut } ?? .max) < 2048)
        // The credential never travels in a URL.
        #expect(!(log + check).contains { $0.path.contains(fleet.flowers.credential) })
    }

    @Test("a host that ignores Range and cuts the whole file short below the resume point fails cleanly; the next access completes",
          arguments: SDKFleet.Transport.allCases)
    func rangeIgnoredAndCut(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        // The first model request is cut after 60 000 bytes, so the retry resumes there with
        // Range. From then on Range is dropped: the whole file comes back as 200, cut after
        // 20 000 bytes, below the resume point — the download starts over and ends short of it.
        let requests = Counter(), answers = Counter()
        proxy.setRequestRule { method, path in
            method == "GET" && path.hasPrefix("/v1/blobs/") && requests.next() > 0 ? ["range"] : []
        }
        proxy.setRule { method, path, _, _, _ in
            guard method == "GET", path.hasPrefix("/v1/blobs/") else { return .forward }
            return answers.next() == 0 ? .cut(after: 60_000) : .cut(after: 20_000)
        }
        let cache = fleet.folder("range-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url, retries: 3, transport: transport))
        await #expect {
            _ = try await client.beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            // URLSession reports the short body as a lost connection.
            guard case .collectionUnavailable(_, .offline) = error as? CofferError else { return false }
            return true
        }
        let log = proxy.takeLog().filter { $0.path.hasPrefix("/v1/blobs/") }
        #expect(log.count >= 2 && log.dropFirst().allSatisfy { $0.status == 200 }, "\(log.map(\.status))")
        #expect(SDKFleet.names(cache, "blobs").isEmpty)

        proxy.setRequestRule { _, _ in [] }
        proxy.setRule { _, _, _, _, _ in .forward }
        let collection = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(collection.origin == .server)
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
    }

    @Test("the Progress counts the bytes to download, and cancelling it ends the wait at once; the next access downloads")
    func progressAndCancel() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let cache = fleet.folder("cancel-cache")
        let held = try await HeldDownload(fleet, cache: cache)
        defer { held.finish() }
        let (client, progress) = (held.client, held.progress)
        // Once the manifest is verified, the Progress knows the bytes to come; none has come yet.
        #expect(progress.totalUnitCount == held.total)
        #expect(progress.completedUnitCount == 0)
        // Cancelled while the models are held back: only a working cancellation ends it without them.
        progress.cancel()
        let outcome = try await held.outcome()
        #expect(throws: CofferError.collectionUnavailable(identifier: "FlowerModels", cause: .cancelled)) { try outcome?.get() }
        #expect(SDKFleet.names(cache, "blobs").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: cache.path + "/collections/FlowerModels/state.json"))

        held.gate.open()
        held.proxy.setRule { _, _, _, _, _ in .forward }
        let collection = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(collection.origin == .server && collection.sequence == 1)
    }

    @Test("a corrupted model is refused and the previous collection kept", arguments: SDKFleet.Transport.allCases)
    func corruptedBlob(transport: SDKFleet.Transport) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let cache = fleet.folder("corrupt-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url, transport: transport))
        #expect(try await client.beginAccessing(identifier: "FlowerModels").sequence == 1)

        try await fleet.deploy("summer", classifier: "classifier-large")
        let large = fleet.flowers.sha["classifier-large"]!
        proxy.setRule { method, path, _, _, _ in
            guard method == "GET", path.hasPrefix("/v1/blobs/\(large)") else { return .forward }
            return .mutate { body in if body.count > 5000 { body[body.startIndex + 5000] ^= 0x01 } }
        }
        let refused = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(refused.origin.isStale { if case .modelRefused(name: "FlowerClassifier", _) = $0 { return true } else { return false } },
                "\(refused.origin)")
        #expect(refused.sequence == 1)
        #expect(try await refused.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
        #expect(!SDKFleet.names(cache, "blobs").contains(large + ".coffer"))
        #expect(SDKFleet.names(cache, "staging").isEmpty)

        proxy.setRule { _, _, _, _, _ in .forward }
        let repaired = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(repaired.origin == .server && repaired.sequence == 2)
        #expect(try await repaired.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
    }

    @Test("a tampered or older manifest is refused and the cached collection keeps serving")
    func refusedManifests() async throws {
        // Manifests live a week here: the replayed older one must be refused for being older, not for
        // having expired, however long a loaded machine takes between the steps (expiry: next test).
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let (proxy, recorded) = try fleet.manifestRecordingProxy()
        defer { proxy.stop() }
        let cache = fleet.folder("manifest-cache")
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        let fresh = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(fresh.sequence == 1 && !fresh.isExpired)
        let first = try #require(recorded.last)

        // Tampered: one character of the signed payload changed.
        proxy.setRule { _, path, _, _, _ in
            guard path.contains("/manifest") else { return .forward }
            var forged = first
            let index = forged.startIndex + 40
            forged[index] = forged[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            return .respond(forged)
        }
        let tampered = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(tampered.origin.isStale { if case .manifestRefused(let reason) = $0 { return reason.contains("signature") } else { return false } },
                "\(tampered.origin)")
        #expect(tampered.sequence == 1)

        // Older: after sequence 2, the recorded sequence-1 manifest is replayed.
        proxy.setRule(SDKFleet.recordingManifests(into: recorded))
        try await fleet.deploy("summer", classifier: "classifier-large")
        #expect(try await client.beginAccessing(identifier: "FlowerModels").sequence == 2)
        let second = try #require(recorded.last)
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .respond(first) : .forward }
        let older = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(older.origin.isStale { if case .manifestRefused(let reason) = $0 { return reason.contains("older") } else { return false } },
                "\(older.origin)")
        #expect(older.sequence == 2)
        // Still refused when a model of the cached collection has gone from the cache (a cleaner,
        // a damaged disk): the verified sequence stays the floor, and the missing model is
        // downloaded again from the cached manifest that named it, not the replayed one.
        let largeBlob = cache.path + "/collections/FlowerModels/blobs/" + fleet.flowers.sha["classifier-large"]! + ".coffer"
        try FileManager.default.removeItem(atPath: largeBlob)
        let incomplete = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(incomplete.origin.isStale { if case .manifestRefused(let reason) = $0 { return reason.contains("older") } else { return false } },
                "\(incomplete.origin)")
        #expect(incomplete.sequence == 2)
        #expect(FileManager.default.fileExists(atPath: largeBlob))
        #expect(try await incomplete.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        proxy.setRule { _, _, _, _, _ in .forward }
        let repaired = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(repaired.sequence == 2)
        #expect(FileManager.default.fileExists(atPath: largeBlob))
    }

    @Test("an expired manifest is refused and the cache keeps serving, marked expired; a forged 304 does not revive it")
    func expiredManifests() async throws {
        // Manifests live 3 minutes here, so the recorded one expires during the test.
        guard let fleet = try await SDKFleet(environment: ["COFFER_MANIFEST_LIFETIME_HOURS": "0.05"]) else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let (proxy, recorded) = try fleet.manifestRecordingProxy()
        defer { proxy.stop() }
        let client = try CofferClient(configuration: fleet.configuration(fleet.folder("manifest-cache"), server: proxy.url))
        let current = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(current.sequence == 1 && !current.isExpired)
        let recordedManifest = try #require(recorded.last)

        // Expired: the recorded manifest (the one the cache holds), replayed after its expiry.
        let expiry = try #require(current.expiresAt)
        try await Task.sleep(nanoseconds: UInt64(max(0, expiry.timeIntervalSinceNow + 1) * 1e9))
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .respond(recordedManifest) : .forward }
        let expired = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(expired.origin.isStale { if case .manifestRefused(let reason) = $0 { return reason.contains("expired") } else { return false } },
                "\(expired.origin)")
        #expect(expired.sequence == 1)
        #expect(expired.isExpired, "the collection says its manifest has expired while the cache serves it")
        #expect(try await expired.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])

        // A forged 304 to a request that named no ETag (the cached manifest is past its expiry, so
        // none is sent) would keep the old manifest alive for ever: refused, and the cache is stale.
        proxy.setRule { _, path, _, _, _ in path.contains("/manifest") ? .status(304) : .forward }
        _ = proxy.takeLog()
        let frozen = try await client.beginAccessing(identifier: "FlowerModels")
        #expect(proxy.takeLog().first { $0.path.contains("/manifest") }?.headers["if-none-match"] == nil)
        #expect(frozen.origin.isStale { if case .server(status: 304, _, _) = $0 { return true } else { return false } }, "\(frozen.origin)")
        #expect(frozen.sequence == 1)
    }

    @Test("an update beyond the cache bound is refused before any download; a manifest for another collection is refused")
    func boundAndOtherCollection() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("bound-cache")
        var bounded = try fleet.configuration(cache)
        bounded.maximumCacheBytes = 100_000
        await #expect {
            _ = try await CofferClient(configuration: bounded).beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .cache(let reason)) = error as? CofferError else { return false }
            return reason.contains("exceeds the bound of 100000")
        }
        #expect(SDKFleet.names(cache, "blobs").isEmpty && SDKFleet.names(cache, "staging").isEmpty)

        // OtherModels is asked for; the proxy answers with FlowerModels' (validly signed) manifest.
        try await fleet.session.ok("collection", "create", "OtherModels", "--team", "Flowers", "--models", "FlowerClassifier,FlowerStylizer")
        try await fleet.session.ok("deployment", "create", "--collection", "OtherModels", "--name", "other", "--model", "FlowerClassifier=classifier.coffer",
                             "--model", "FlowerStylizer=stylizer.coffer", "--activate")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let recorded = Recorded()
        proxy.setRule { _, path, _, status, body in
            if path.contains("/FlowerModels/manifest"), status == 200 { recorded.add(body) }
            return .forward
        }
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        _ = try await client.beginAccessing(identifier: "FlowerModels")
        let flowers = try #require(recorded.last)
        proxy.setRule { _, path, _, _, _ in path.contains("/OtherModels/manifest") ? .respond(flowers) : .forward }
        await #expect {
            _ = try await client.beginAccessing(identifier: "OtherModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .manifestRefused(let reason)) = error as? CofferError else { return false }
            return reason.contains("FlowerModels")
        }
        // Cache only: the cached collection, no request at all.
        _ = proxy.takeLog()
        let cachedOnly = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url, policy: .cachedOnly))
        let cached = try await cachedOnly.beginAccessing(identifier: "FlowerModels")
        #expect(cached.origin == .cache(staleBecause: nil) && cached.sequence == 1)
        #expect(proxy.takeLog().isEmpty)
    }

    @Test("a delivered key that does not open the model is refused and not kept; a kept key that does not is fetched again")
    func wrongKeys() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        let cache = fleet.folder("wrong-key-cache")
        let store = FileKeyStore(directory: cache.appendingPathComponent("keys", isDirectory: true))
        let client = try CofferClient(configuration: fleet.configuration(cache, server: proxy.url))
        let entry = try #require(try await client.beginAccessing(identifier: "FlowerModels").entries["FlowerClassifier"])
        let keyID = try #require(entry.keyID)

        // Whoever answers in the server's place seals a key of their own to the device's public
        // key (HPKE's base mode cannot tell): refused, and not kept.
        proxy.setRule { _, path, _, _, _ in
            guard path.hasPrefix("/v1/device/keys/"),
                  let raw = try? store.load("device-key"), let device = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
                  let forged = try? KeyDelivery.seal(SymmetricKey(size: .bits256), keyID: keyID, deviceID: "device-1", to: device.publicKey)
            else { return .forward }
            let body = ["encapsulatedKey": forged.encapsulatedKey.base64EncodedString(), "ciphertext": forged.ciphertext.base64EncodedString()]
            return .respond(try! JSONEncoder().encode(body))
        }
        await #expect {
            _ = try await entry.data()
        } throws: { error in
            guard case .keyRefused(_, "wrong_key", _) = error as? CofferError else { return false }
            return true
        }
        #expect(try store.load("model-key." + keyID) == nil)

        // A key kept earlier that does not open the model is dropped and fetched again.
        try store.save("model-key." + keyID, Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        proxy.setRule { _, _, _, _, _ in .forward }
        #expect(try await entry.data() == fleet.plain["classifier"])
        let kept = try #require(try store.load("model-key." + keyID))
        #expect(kept.count == 32)
        // Now kept, it opens offline without the server.
        proxy.stop()
        #expect(try await entry.data() == fleet.plain["classifier"])
    }

    @Test("another team's app cannot obtain the key")
    func otherTeam() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        let cache = fleet.folder("team-cache")
        _ = try await CofferClient(configuration: fleet.configuration(cache)).beginAccessing(identifier: "FlowerModels")

        try await fleet.session.ok("team", "create", "Weeds")
        let weeds = await AdminSession.object(try fleet.session.ok("app", "create", "--team", "Weeds", "--name", "WeedApp", "--platform", "ios", "--json"))
        var configuration = try fleet.configuration(cache, policy: .cachedOnly)
        configuration.appID = try #require(weeds["id"] as? String)
        configuration.credential = try #require(weeds["credential"] as? String)
        configuration.keyStore = FileKeyStore(directory: fleet.folder("weed-keys"))
        configuration.deviceID = "weed-device"
        let client = try CofferClient(configuration: configuration)
        let collection = try #require(try client.cachedCollection(identifier: "FlowerModels"))
        await #expect {
            _ = try await collection.entries["FlowerClassifier"]?.data()
        } throws: { error in
            guard case .keyRefused(_, let code, _) = error as? CofferError else { return false }
            return code == "other_team"
        }
        // And it cannot get the other team's manifest either.
        configuration.updatePolicy = .waitForLatest
        configuration.cacheDirectory = fleet.folder("weed-cache")
        await #expect {
            _ = try await CofferClient(configuration: configuration).beginAccessing(identifier: "FlowerModels")
        } throws: { error in
            guard case .collectionUnavailable(_, .server(status: 403, _, _)) = error as? CofferError else { return false }
            return true
        }
    }
}

/// The result a completion handler got.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<ModelCollection, any Error>?
    func set(_ value: Result<ModelCollection, any Error>) { lock.withLock { result = value } }
    func get() -> Result<ModelCollection, any Error>? { lock.withLock { result } }
}

/// Bodies a proxy rule recorded.
/// Counts calls from any thread: `next()` gives 0, 1, 2, …
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
}

final class Recorded: @unchecked Sendable {
    private let lock = NSLock()
    private var bodies: [Data] = []
    func add(_ body: Data) { lock.withLock { bodies.append(body) } }
    var last: Data? { lock.withLock { bodies.last } }
    var count: Int { lock.withLock { bodies.count } }
    /// The bodies as UTF-8 text.
    var statuses: [String] { lock.withLock { bodies.map { String(decoding: $0, as: UTF8.self) } } }
}
