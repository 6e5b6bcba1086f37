@testable import Coffer
import CofferFormat
import Foundation
import Testing

/// `coffer report`, the built binary, against a real server, and the last known good fallback
/// killed at every step.
@Suite("coffer report against a real server")
struct ReportCommandTests {
    @Test("report --loaded and --failed reach the server's counts; --failed falls back, open uses the previous model, sync keeps it; offline, the report is queued")
    func reportLoadedAndFailed() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let cli = fleet.session.cli
        let sha = fleet.flowers.sha
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("summer", classifier: "classifier-large")
        let synced = await AdminSession.object(try fleet.sync("edge", json: true).stdout)
        let summerID = try #require(synced["deploymentID"] as? String)

        let loaded = try await fleet.report("edge", model: "FlowerStylizer", ["--loaded"])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        #expect(loaded.stderr.isEmpty, "\(loaded.stderr)")
        #expect(loaded.stdout == "Reported FlowerStylizer loaded (deployment \(summerID), sequence 2).\n")

        let failed = try await fleet.report("edge", model: "FlowerClassifier", ["--failed", "out of memory in /home/alice/app\u{1B}[31m"])
        #expect(failed.status == 0, "\(failed.stderr)")
        #expect(failed.stderr.isEmpty, "\(failed.stderr)")
        #expect(failed.stdout.hasPrefix("Reported FlowerClassifier failed (deployment \(summerID), sequence 2). The cache fell back to deployment "),
                "\(failed.stdout)")
        #expect(failed.stdout.hasSuffix(", sequence 1, and refuses this FlowerClassifier until a deployment names another one.\n"))
        #expect(!(loaded.stdout + failed.stdout + loaded.stderr + failed.stderr).contains(fleet.flowers.credential))
        #expect(SDKFleet.queuedReports(fleet.folder("edge")).isEmpty)

        let status = try await fleet.status("summer") { SDKFleet.outcomes($0)["failed"] == 1 && SDKFleet.outcomes($0)["loaded"] == 1 }
        #expect(SDKFleet.outcomes(status)["loaded"] == 1 && SDKFleet.outcomes(status)["failed"] == 1, "\(status)")
        let reasons = (status["topReasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        // The escape character is gone; what it started stays as text.
        #expect(reasons == ["out of memory in <path> [31m"], "\(reasons)")

        // The edge box's next open uses the previous classifier; sync keeps it while the server names the failed one.
        #expect(try fleet.cachedModels(fleet.folder("edge"))["FlowerClassifier"] == sha["classifier"])
        let opened = try await cli.run("open", "--cache", "edge", "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
        #expect(opened.status == 0 && opened.stdoutBytes == fleet.plain["classifier"], "\(opened.stderr)")
        // The open is queued as a report before the command ends; the next run sends it.
        #expect(SDKFleet.queuedReports(fleet.folder("edge")).map { $0["outcome"] as? String } == ["opened"])
        let kept = try await fleet.sync("edge")
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stderr.contains("model FlowerClassifier failed on this device (out of memory in <path> [31m); the last known good is kept"),
                "\(kept.stderr)")
        #expect(try fleet.cachedModels(fleet.folder("edge"))["FlowerClassifier"] == sha["classifier"])

        // Mistakes: one line each.
        await AdminSession.expectFailure(try fleet.report("edge", model: "Nope", ["--loaded"]), 66,
                                   "collection FlowerModels has no model Nope (it has FlowerClassifier, FlowerStylizer)")
        await AdminSession.expectFailure(try fleet.report("nowhere", model: "FlowerClassifier", ["--loaded"]), 66,
                                   "nowhere holds no synced collection FlowerModels; run coffer sync first")
        let both = try await fleet.report("edge", model: "FlowerClassifier", ["--loaded", "--failed", "x"])
        #expect(both.status == 64 && both.stderr.contains("give --loaded or --failed REASON"), "\(both.stderr)")

        // Offline: exit 69, one line, and the report waits in the queue for the next run.
        await fleet.session.server.stop()
        let offline = try await fleet.report("edge", model: "FlowerStylizer", ["--loaded"])
        #expect(offline.status == 69, "\(offline.stderr)")
        #expect(offline.stderr.hasPrefix("coffer: the report is queued and will be sent later: the server cannot be reached ("), "\(offline.stderr)")
        #expect(offline.stderr.split(separator: "\n").count == 1 && offline.stdout.isEmpty)
        #expect(SDKFleet.queuedReports(fleet.folder("edge")).last?["outcome"] as? String == "loaded")
    }

    @Test("a refused report exits 77 (403) with one line and is dropped; the fallback --failed asked for has happened all the same")
    func refusedReport() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync("edge").status == 0)
        try await fleet.deploy("summer", classifier: "classifier-large")
        #expect(try await fleet.sync("edge").status == 0)
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        proxy.setRule { _, path, _, _, _ in path.hasPrefix("/v1/device/reports") ? .status(403) : .forward }

        let refused = try await fleet.report("edge", model: "FlowerClassifier", ["--failed", "crashed"], server: proxy.url)
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("coffer: the server refused the report (HTTP 403 "), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(refused.stdout.hasPrefix("Not reported: FlowerClassifier failed (deployment "), "\(refused.stdout)")
        #expect(refused.stdout.contains(" The cache fell back to deployment "), "\(refused.stdout)")
        #expect(SDKFleet.queuedReports(fleet.folder("edge")).isEmpty)
        #expect(try fleet.cachedModels(fleet.folder("edge"))["FlowerClassifier"] == fleet.flowers.sha["classifier"])
    }

    @Test("when the queue cannot be written after the server's 200 (a full disk), the batch is sent once, not again and again; the next report sends it")
    func unwritableQueueSendsOnce() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync("full-disk").status == 0)
        let cache = fleet.folder("full-disk")
        // 100 events queued before the report (a device long offline): the first batch does not hold it.
        try await ReportQueue(root: cache).append((0..<100).map { ReportUnitTests.event($0) })
        let queued = SDKFleet.queuedReports(cache).count
        // Every batch is taken (200), whatever the server made of these events.
        let proxy = try TamperingProxy(upstreamPort: fleet.session.server.port)
        defer { proxy.stop() }
        proxy.setRule { _, path, _, _, _ in path.hasPrefix("/v1/device/reports") ? .status(200) : .forward }
        func sends() -> Int { proxy.takeLog().filter { $0.path.hasPrefix("/v1/device/reports") }.count }

        // The queue cannot be replaced after the first 200. Before, the send read the same events
        // again and sent the same batch again at once, 1010 times.
        let full = try await fleet.report("full-disk", model: "FlowerStylizer", ["--loaded"], server: proxy.url,
                                          environment: ["COFFER_TEST_FAIL_AT": "reports-removing"])
        #expect(sends() == 1)
        #expect(full.status == 74 && full.stderr.contains("the report queue cannot be written"), "\(full.status) \(full.stderr)")
        #expect(SDKFleet.queuedReports(cache).count == queued + 1)

        // With room again, the next report sends what stayed queued, and itself.
        let next = try await fleet.report("full-disk", model: "FlowerStylizer", ["--loaded"], server: proxy.url)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(sends() == 2)
        #expect(SDKFleet.queuedReports(cache).isEmpty)
    }

    @Test("killed at every step of the fallback, the cache holds one whole version, the failed or the previous; the next open, or sync, finishes the fallback")
    func killedMidFallback() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let cli = fleet.session.cli
        let sha = fleet.flowers.sha
        let plainBySHA = [sha["classifier"]!: fleet.plain["classifier"]!, sha["classifier-large"]!: fleet.plain["classifier-large"]!,
                          sha["stylizer"]!: fleet.plain["stylizer"]!]
        let failedVersion = ["FlowerClassifier": sha["classifier-large"]!, "FlowerStylizer": sha["stylizer"]!]
        let previousVersion = ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!]
        try await fleet.deploy("spring", classifier: "classifier")
        try await fleet.deploy("summer", classifier: "classifier-large")

        for (index, point) in (CrashPoint.fallback + ["old-removed"]).enumerated() {
            let name = "edge-\(index)"
            let cache = fleet.folder(name)
            try await fleet.activate("spring")
            #expect(try await fleet.sync(name).status == 0, "\(point)")
            try await fleet.activate("summer")
            #expect(try await fleet.sync(name).status == 0, "\(point)")
            #expect(try fleet.cachedModels(cache) == failedVersion, "\(point)")

            let killed = try await fleet.report(name, model: "FlowerClassifier", ["--failed", "out of memory"],
                                          environment: ["COFFER_TEST_KILL_AT": point])
            #expect(killed.status == 9, "\(point): \(killed.status) \(killed.stderr)")

            // One whole version: the failed one or the previous one, never a mix.
            let now = try fleet.cachedModels(cache)
            #expect(now == failedVersion || now == previousVersion, "\(point): \(now)")
            // The failure is recorded at every point: `coffer open` (cached only, no update) finishes
            // the fallback the crash interrupted and opens the previous version, whole.
            for (model, modelSHA) in previousVersion {
                let opened = try await cli.run("open", "--cache", name, "--collection", "FlowerModels", model, "--stdout")
                #expect(opened.status == 0, "\(point) \(model): \(opened.stderr)")
                #expect(opened.stdoutBytes == plainBySHA[modelSHA], "\(point) \(model)")
            }
            #expect(try fleet.cachedModels(cache) == previousVersion, "\(point)")

            // The next sync keeps it and refuses the failed model; nothing is left behind.
            let finished = try await fleet.sync(name)
            #expect(finished.status == 0 && finished.stderr.contains("model FlowerClassifier failed on this device"), "\(point): \(finished.stderr)")
            #expect(try fleet.cachedModels(cache) == previousVersion, "\(point)")
            #expect(SDKFleet.names(cache, "blobs") == Set(previousVersion.values.map { $0 + ".coffer" }), "\(point)")
            #expect(!SDKFleet.names(cache, "").contains { $0.hasPrefix(".") }, "\(point)")
        }
    }

    @Test("killed after recording the failure, a cached-only access finishes the fallback: the previous version, with fallback set, announced",
          arguments: ["beginAccessing", "cachedCollection"])
    func cachedOnlyFinishesFallback(access: String) async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let name = "interrupted-" + access
        let cache = fleet.folder(name)
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync(name).status == 0)
        try await fleet.deploy("summer", classifier: "classifier-large")
        #expect(try await fleet.sync(name).status == 0)
        let killed = try await fleet.report(name, model: "FlowerClassifier", ["--failed", "out of memory"],
                                            environment: ["COFFER_TEST_KILL_AT": "fallback-recorded"])
        #expect(killed.status == 9, "\(killed.status) \(killed.stderr)")
        #expect(try fleet.cachedModels(cache)["FlowerClassifier"] == sha["classifier-large"])

        // No update runs to finish it. Before, the access served the failed model, without `fallback`,
        // for as long as the app stayed cached-only.
        let client = try CofferClient(configuration: fleet.configuration(cache, policy: .cachedOnly))
        let updates = client.updates(identifier: "FlowerModels")
        let served: ModelCollection
        if access == "beginAccessing" {
            served = try await client.beginAccessing(identifier: "FlowerModels")
        } else {
            served = try #require(try client.cachedCollection(identifier: "FlowerModels"))
        }
        #expect(served.sequence == 1 && served.entries["FlowerClassifier"]?.sha256 == sha["classifier"], "\(String(describing: served.sequence))")
        #expect(served.fallback?.modelName == "FlowerClassifier" && served.fallback?.sha256 == sha["classifier-large"])
        #expect(served.fallback?.sequence == 2 && served.fallback?.reason == "out of memory")
        #expect(try fleet.cachedModels(cache) == ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!])
        let announced = try #require(try await SDKFleet.within(60) {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next()
        })
        #expect(announced.sequence == 1 && announced.fallback?.sha256 == sha["classifier-large"])
        #expect(try await served.entries["FlowerClassifier"]?.data() == fleet.plain["classifier"])
    }

    @Test("an update whose switch fails (a full disk as state.json is written) keeps the last known good: a failure then falls back to it")
    func failedSwitchKeepsPrevious() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let spring = ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!]
        let summer = ["FlowerClassifier": sha["classifier-large"]!, "FlowerStylizer": sha["stylizer"]!]
        let name = "switch-fails"
        let cache = fleet.folder(name)
        try await fleet.deploy("spring", classifier: "classifier")
        #expect(try await fleet.sync(name).status == 0)
        try await fleet.deploy("summer", classifier: "classifier-large")
        #expect(try await fleet.sync(name).status == 0)
        #expect(try fleet.cachedModels(cache) == summer)
        #expect(try fleet.cachedModels(cache, state: "previous/state.json") == spring)

        // Autumn names a third classifier: the sync downloads it, then cannot write state.json.
        fleet.session.cli.write("classifier-autumn.bin", CLI.randomData(100_000))
        try await fleet.session.ok("encrypt", "classifier-autumn.bin", "--key", "flowers.modelkey", "--output", "classifier-autumn.coffer", "--quiet")
        try await fleet.deploy("autumn", classifier: "classifier-autumn")
        let full = try await fleet.sync(name, environment: ["COFFER_TEST_FAIL_AT": "state-written"])
        #expect(full.status == 74 && full.stderr.contains("No space left on device"), "\(full.status) \(full.stderr)")
        // Summer stays in force, and spring its last known good. Before, summer had replaced spring
        // in previous/ ahead of the write: summer then had no version to fall back to.
        #expect(try fleet.cachedModels(cache) == summer)
        #expect(try fleet.cachedModels(cache, state: "previous/state.json") == spring)
        #expect(SDKFleet.names(cache, "previous") == ["state.json", "blobs"])
        #expect(SDKFleet.names(cache, "previous/blobs") == Set(spring.values.map { $0 + ".coffer" }))

        let failed = try await fleet.report(name, model: "FlowerClassifier", ["--failed", "out of memory"])
        #expect(failed.status == 0 && failed.stdout.contains("The cache fell back to deployment ") && failed.stdout.contains(", sequence 1,"),
                "\(failed.stdout) \(failed.stderr)")
        #expect(try fleet.cachedModels(cache) == spring)
    }

    @Test("killed while an update keeps the previous version, the cache serves the old deployment; the next sync switches and a failure falls back to it")
    func killedWhileKeepingPrevious() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        let sha = fleet.flowers.sha
        let spring = ["FlowerClassifier": sha["classifier"]!, "FlowerStylizer": sha["stylizer"]!]
        let summer = ["FlowerClassifier": sha["classifier-large"]!, "FlowerStylizer": sha["stylizer"]!]
        try await fleet.deploy("spring", classifier: "classifier")
        try await fleet.deploy("summer", classifier: "classifier-large")

        for (index, point) in ["previous-written", "previous-committed"].enumerated() {
            let name = "keeping-\(index)"
            let cache = fleet.folder(name)
            try await fleet.activate("spring")
            #expect(try await fleet.sync(name).status == 0, "\(point)")
            try await fleet.activate("summer")
            let killed = try await fleet.sync(name, environment: ["COFFER_TEST_KILL_AT": point])
            #expect(killed.status == 9, "\(point): \(killed.status) \(killed.stderr)")
            #expect(try fleet.cachedModels(cache) == spring, "\(point)")
            let opened = try await fleet.session.cli.run("open", "--cache", name, "--collection", "FlowerModels", "FlowerClassifier", "--stdout")
            #expect(opened.status == 0 && opened.stdoutBytes == fleet.plain["classifier"], "\(point): \(opened.stderr)")

            #expect(try await fleet.sync(name).status == 0, "\(point)")
            #expect(try fleet.cachedModels(cache) == summer, "\(point)")
            let failed = try await fleet.report(name, model: "FlowerClassifier", ["--failed", "crashed"])
            #expect(failed.status == 0 && failed.stdout.contains("The cache fell back to deployment "), "\(point): \(failed.stdout) \(failed.stderr)")
            #expect(try fleet.cachedModels(cache) == spring, "\(point)")
        }
    }
}
