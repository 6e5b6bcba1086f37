@testable import Coffer
import Foundation
import Testing

/// A cache folder removed while an update holds its lock (an app's "clear storage", a user deleting
/// the folder): the lock was on a file of that folder, so a new client makes a new folder and a new
/// lock file and holds "the" lock too. The old update must notice and write nothing into the new
/// folder, and the new client must not wait for it.
@Suite("A cache folder removed during an update")
struct ClearedCacheTests {
    @Test("a lock whose file was removed says so, and the next acquire locks the file that is there now")
    func lockOnARemovedFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-lock-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/lock"

        let first = try await FileLock.acquire(path)
        #expect(first.isStillNamed())
        // A waiter blocked on the first lock; the file is removed while it waits.
        let waiter = Task { try await FileLock.acquire(path) }
        try await Task.sleep(nanoseconds: 200_000_000)
        try FileManager.default.removeItem(atPath: path)
        #expect(!first.isStillNamed())
        // A newcomer locks the new file at once; the waiter, once the old lock goes, does not
        // settle for the removed file: it queues on the file the path names now.
        let newcomer = try await FileLock.acquire(path)
        #expect(newcomer.isStillNamed())
        first.release()
        try await Task.sleep(nanoseconds: 300_000_000)
        newcomer.release()
        let second = try await waiter.value
        #expect(second.isStillNamed())
        second.release()
    }

    @Test("an update whose folder was removed stops before writing; the client that made the new folder is not held up and keeps its models")
    func updateInARemovedFolder() async throws {
        guard let fleet = try await SDKFleet() else { return }
        defer { fleet.finish() }
        try await fleet.deploy("summer", classifier: "classifier-large")
        let cache = fleet.folder("cleared-cache")
        // The old client's update holds the lock, its download held back by the proxy.
        let held = try await HeldDownload(fleet, cache: cache)
        defer { held.finish() }
        try #require(held.progress.totalUnitCount == held.total)

        // Storage cleared; a new client (the app after the clear) updates the same folder directly.
        try FileManager.default.removeItem(at: cache)
        let new = try CofferClient(configuration: fleet.configuration(cache))
        let fresh = try await SDKFleet.within(120) { try await new.beginAccessing(identifier: "FlowerModels") }
        #expect(fresh.origin == .server)

        // The old update goes on only now: it finds its folder gone and stops.
        held.gate.open()
        let outcome = try await held.outcome()
        // The app still gets the models: the new client's, from the cache, stale for that reason.
        let served = try #require(try outcome?.get())
        #expect(served.origin.isStale { if case .cache(let reason) = $0 { reason.contains("removed while this update ran") } else { false } },
                "\(served.origin)")
        #expect(served.sequence == fresh.sequence)

        // The new folder is the new client's, whole: a third client opens the same models from it.
        let reopened = try CofferClient(configuration: fleet.configuration(cache))
        let collection = try await reopened.beginAccessing(identifier: "FlowerModels")
        #expect(collection.sequence == fresh.sequence)
        #expect(try await collection.entries["FlowerClassifier"]?.data() == fleet.plain["classifier-large"])
        #expect(!SDKFleet.names(cache, "blobs").contains { $0.hasSuffix(".part") })
    }
}
