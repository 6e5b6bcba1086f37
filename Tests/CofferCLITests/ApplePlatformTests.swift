@testable import Coffer
@testable import CofferFormat
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The platform-independent halves of the Apple-platform behaviour (issue 19): the choices are
/// pure functions or take their system calls as arguments, so Linux CI checks each platform's
/// answer. Test doubles stand in for what only Apple's systems have; their names say so.
@Suite("Apple platforms: choices tested on Linux")
struct ApplePlatformTests {
    @Test("cache folder, backup exclusion and Keychain service for each platform")
    func placement() {
        for platform in [StoragePlacement.Platform.iOS, .watchOS, .visionOS] {
            let placement = StoragePlacement.choose(for: platform, bundleIdentifier: "com.example.app", sandboxed: false)
            #expect(placement == StoragePlacement(base: .applicationSupport, folders: ["Coffer"], excludedFromBackup: true,
                                                  readableAfterFirstUnlock: true, keychainService: "coffer"))
        }
        let tv = StoragePlacement.choose(for: .tvOS, bundleIdentifier: "com.example.tv", sandboxed: false)
        #expect(tv.base == .caches && tv.folders == ["Coffer"] && tv.excludedFromBackup && tv.readableAfterFirstUnlock)
        let sandboxed = StoragePlacement.choose(for: .macOS, bundleIdentifier: "com.example.mac", sandboxed: true)
        #expect(sandboxed.folders == ["Coffer"] && sandboxed.keychainService == "coffer")
        // Outside the sandbox two apps must not share a folder or a Keychain service.
        let one = StoragePlacement.choose(for: .macOS, bundleIdentifier: "com.example.one", sandboxed: false)
        let two = StoragePlacement.choose(for: .macOS, bundleIdentifier: "com.example.two", sandboxed: false)
        #expect(one.folders == ["com.example.one", "Coffer"] && one.keychainService == "coffer.com.example.one")
        #expect(one.folders != two.folders && one.keychainService != two.keychainService)
        #expect(one.excludedFromBackup)
        // macOS has no protection classes to choose (sandboxed or not).
        #expect(!one.readableAfterFirstUnlock && !sandboxed.readableAfterFirstUnlock)
        // No usable bundle identifier (a command-line tool, or one that cannot name a folder).
        for identifier in [nil, "", "..", "a/b"] as [String?] {
            let tool = StoragePlacement.choose(for: .macOS, bundleIdentifier: identifier, sandboxed: false)
            #expect(tool.folders == ["Coffer"] && tool.keychainService == "coffer")
        }
    }

    @Test("the full flush is used when it works and fsync when the file system refuses it")
    func durableSync() {
        let calls = Calls()
        #expect(DurableSync.flush(7, full: { calls.add("full \($0)"); return 0 }, plain: { calls.add("plain \($0)"); return 0 }) == 0)
        #expect(calls.list == ["full 7"])
        let refused = Calls()
        let result = DurableSync.flush(7, full: { refused.add("full \($0)"); errno = ENOTSUP; return -1 },
                                       plain: { refused.add("plain \($0)"); return 0 })
        #expect(result == 0 && refused.list == ["full 7", "plain 7"])
        // A plain failure is the answer.
        #expect(DurableSync.flush(7, full: nil, plain: { _ in errno = EIO; return -1 }) == -1 && errno == EIO)
        // And the real one flushes a real file.
        let path = NSTemporaryDirectory() + "coffer-sync-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(fd); unlink(path) }
        #expect(DurableSync.flush(fd) == 0)
    }

    @Test("the no-replace rename falls back when the volume refuses it, and still never replaces")
    func renameFallback() throws {
        let folder = NSTemporaryDirectory() + "coffer-rename-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let unsupported: (String, String) -> Int32 = { _, _ in errno = ENOTSUP; return -1 }
        #expect(FileManager.default.createFile(atPath: folder + "/a", contents: Data("a".utf8)))
        #expect(AtomicOutput.renameNoReplace(folder + "/a", folder + "/b", exclusive: unsupported) == 0)
        #expect(FileManager.default.contents(atPath: folder + "/b") == Data("a".utf8))
        #expect(FileManager.default.createFile(atPath: folder + "/c", contents: Data("c".utf8)))
        #expect(AtomicOutput.renameNoReplace(folder + "/c", folder + "/b", exclusive: unsupported) == -1)
        #expect(errno == EEXIST)
        #expect(FileManager.default.contents(atPath: folder + "/b") == Data("a".utf8))
        // Another failure of the exclusive rename is the answer, not a reason to fall back.
        let denied: (String, String) -> Int32 = { _, _ in errno = EACCES; return -1 }
        #expect(AtomicOutput.renameNoReplace(folder + "/c", folder + "/d", exclusive: denied) == -1 && errno == EACCES)
        #expect(!FileManager.default.fileExists(atPath: folder + "/d"))
    }

    @Test("both SDK targets ship a privacy manifest naming the file-metadata reason C617.1")
    func privacyManifests() throws {
        for bundle in [Coffer.sdkResourceBundle, CofferFormat.formatResourceBundle] {
            let url = try #require(bundle.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
            let plist = try #require(try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any])
            #expect(plist["NSPrivacyTracking"] as? Bool == false)
            let types = try #require(plist["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
            let timestamp = types.first { $0["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryFileTimestamp" }
            #expect(timestamp?["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["C617.1"])
        }
    }

    @Test("an update's background activity (test double: Apple's expiring activity) ends with it; expiry cancels the work")
    func backgroundActivityDouble() async throws {
        let activity = RecordingActivity()
        let value = try await activity.run("work") { () async throws(SyncFailure) -> Int in 42 }
        #expect(value == 42)
        #expect(activity.begun == 1 && activity.ended == 1)

        let started = AsyncStream<Void>.makeStream()
        let expiring = Task {
            try await activity.run("long") { () async throws(SyncFailure) -> Int in
                started.continuation.yield()
                do {
                    try await Task.sleep(nanoseconds: 600_000_000_000)
                } catch {
                    throw .cancelled
                }
                return 0
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        activity.expire()
        let outcome = await expiring.result
        #expect(throws: SyncFailure.self) { try outcome.get() }
        #expect(activity.begun == 2 && activity.ended == 2)
    }

    @Test("an activity's end and expiry settle once, in either order")
    func activityState() {
        let ended = ActivityState()
        #expect(ended.end() && !ended.end())
        #expect(!ended.expire())
        let expired = ActivityState()
        #expect(expired.expire() && !expired.expire())
        #expect(expired.end())
    }
}

/// Calls recorded by a double.
final class Calls: @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String] = []
    func add(_ call: String) { lock.withLock { calls.append(call) } }
    var list: [String] { lock.withLock { calls } }
}

/// A test double for Apple's expiring background activity: counts begins and ends and expires on demand.
final class RecordingActivity: BackgroundActivity, @unchecked Sendable {
    private let lock = NSLock()
    private var handlers: [@Sendable () -> Void] = []
    private(set) var begun = 0
    private(set) var ended = 0

    func begin(_ reason: String, expired: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        lock.withLock {
            begun += 1
            handlers.append(expired)
        }
        return { [self] in lock.withLock { ended += 1 } }
    }

    func expire() {
        for handler in lock.withLock({ handlers }) { handler() }
    }
}
