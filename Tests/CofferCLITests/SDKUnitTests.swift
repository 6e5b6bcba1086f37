import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Coffer
import CofferFormat

/// The SDK's small parsers and rules, without a server.
@Suite("Coffer SDK units")
struct SDKUnitTests {
    @Test("an I/O error of the disk marks a cached model for the next update; other read failures do not")
    func unreadableModelIsMarked() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-eio-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sha = String(repeating: "ab", count: 32)
        let blob = folder + "/collections/C/blobs/" + sha + ".coffer"
        try FileManager.default.createDirectory(atPath: folder + "/collections/C/blobs", withIntermediateDirectories: true)
        for code in [EMFILE, ENFILE, ENOMEM, EACCES] {
            #expect(!CollectionCache.markDamaged(blobPath: blob, ifUnreadable: IOFailure(operation: .read, path: blob, errno: code)))
        }
        #expect(!CollectionCache.isMarkedDamaged(blobPath: blob))
        #expect(CollectionCache.markDamaged(blobPath: blob, ifUnreadable: IOFailure(operation: .read, path: blob, errno: EIO)))
        #expect(CollectionCache.isMarkedDamaged(blobPath: blob))
        #expect(try CollectionCache(root: URL(fileURLWithPath: folder), identifier: "C").damagedModels() == [sha])
    }

    @Test("failed.json with the largest floor envelope and the most models is read back; one that cannot be read is an error, not 'no failures'")
    func largestFailedRecord() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-failed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let cache = try CollectionCache(root: root, identifier: "FlowerModels")
        try FileManager.default.createDirectory(atPath: cache.folder, withIntermediateDirectories: true)
        #expect(try cache.loadFailed() == nil)

        // The largest envelope the SDK takes, all of whose base64 is `/` (0xFF bytes), and 32 models
        // whose reasons JSON escapes byte for byte: ~1.4 MB, which the 1 MiB limit used to skip
        // (the failed model was then adopted again).
        let models = (0..<FailedModels.maximumModels).map { index in
            FailedModels.Model(model: "FlowerClassifier\(index)", sha256: String(repeating: "ab", count: 32),
                               deploymentID: UUID().uuidString, sequence: UInt64(index), reason: String(repeating: "\"", count: 200),
                               at: Date(timeIntervalSince1970: 1_800_000_000))
        }
        let failed = FailedModels(models: models, floorEnvelope: Data(repeating: 0xFF, count: SignedManifest.maximumEnvelopeSize))
        try cache.writeFailed(failed)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cache.failedPath)[.size] as? Int)
        #expect(size > 1 << 20 && size <= CollectionCache.maximumRecordSize, "\(size) bytes")
        #expect(try cache.loadFailed() == failed)

        // A record that would not be read back is not written; the one there stays.
        var larger = failed
        larger.floorEnvelope = Data(count: CollectionCache.maximumRecordSize)
        #expect(throws: IOFailure.self) { try cache.writeFailed(larger) }
        #expect(try cache.loadFailed() == failed)

        // Larger than any record the cache writes, or not a record: what failed is unknown, an error.
        try Data(repeating: 0x20, count: CollectionCache.maximumRecordSize + 1).write(to: URL(fileURLWithPath: cache.failedPath))
        #expect(throws: UnreadableFailedModels.self) { try cache.loadFailed() }
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: cache.failedPath))
        #expect(throws: UnreadableFailedModels.self) { try cache.loadFailed() }
        // No failure left: no file, no record.
        try cache.writeFailed(FailedModels(models: [], floorEnvelope: Data()))
        #expect(!FileManager.default.fileExists(atPath: cache.failedPath))
        #expect(try cache.loadFailed() == nil)
    }

    @Test("a second download in one update (a repair after a failed one) adds to the progress: it never goes backwards")
    func progressBegunTwice() {
        let shared = DownloadProgress()
        let progress = Foundation.Progress(totalUnitCount: 1)
        shared.observe(progress)
        shared.begin(total: 100)
        shared.add(40)
        #expect(progress.totalUnitCount == 100 && progress.completedUnitCount == 40)
        shared.begin(total: 50)
        #expect(progress.totalUnitCount == 90 && progress.completedUnitCount == 40)
        shared.add(50)
        #expect(progress.totalUnitCount == 90 && progress.completedUnitCount == 90)
    }

    @Test("Content-Range: bytes START-END/TOTAL, TOTAL may be *; anything else is refused")
    func contentRange() {
        #expect(ContentRange("bytes 0-99/100") == ContentRange("bytes 0-99/100"))
        #expect(ContentRange("bytes 5-9/100").map { [$0.start, $0.end, $0.total ?? 0] } == [5, 9, 100])
        #expect(ContentRange("bytes 5-9/*")?.total == nil)
        #expect(ContentRange("bytes 0-100/100") == nil)
        for bad in ["", "bytes", "bytes 9-5/100", "bytes 0-99/99", "bytes 0-99", "items 0-9/10", "bytes -1-9/10", "bytes 0-9/x",
                    "bytes 0-18446744073709551616/1", "bytes 0--9/10"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
        // Mutations of a valid header never crash and are either refused or self-consistent.
        let valid = Array("bytes 100-199/1000".utf8)
        for index in valid.indices {
            for byte: UInt8 in [0x00, 0x2D, 0x2F, 0x30, 0x39, 0x2A, 0x20, 0xFF] {
                var mutated = valid
                mutated[index] = byte
                if let range = ContentRange(String(decoding: mutated, as: UTF8.self)) {
                    #expect(range.end >= range.start && (range.total.map { $0 > range.end } ?? true))
                }
            }
        }
    }

    @Test("detected attributes are values the server accepts")
    func attributes() {
        #expect(DeviceAttributes.gibibytes(8 << 30) == "8")
        #expect(DeviceAttributes.gibibytes((8 << 30) + (1 << 29)) == "8.5")
        #expect(DeviceAttributes.gibibytes(1 << 27) == "0.125")
        #expect(DeviceAttributes.gibibytes(0) == nil)
        #expect(DeviceAttributes.languageTag("en_US") == "en-US")
        #expect(DeviceAttributes.languageTag("zh-Hant-TW") == "zh-Hant-TW")
        #expect(DeviceAttributes.languageTag("C") == nil)
        #expect(DeviceAttributes.languageTag("en_US.UTF-8") == "en-US")
        #expect(DeviceAttributes.regionCode("en_US") == "US")
        #expect(DeviceAttributes.regionCode("es_419") == "419")
        #expect(DeviceAttributes.regionCode("en") == nil)
        #expect(DeviceAttributes.isVersion("17.4") && !DeviceAttributes.isVersion("17.4-beta") && !DeviceAttributes.isVersion("1.2.3.4.5"))
        let current = DeviceAttributes.current
        #expect(current.osName == "Linux" && current.deviceClass == "server")
        #expect(current.osVersion.map(DeviceAttributes.isVersion) == true)
        var custom = DeviceAttributes()
        #expect(custom.set("custom.tier", to: "pro") && custom.set("region", to: "US") && !custom.set("colour", to: "red") && !custom.set("custom.", to: "x"))
        #expect(custom.queryItems.map(\.name) == ["region", "custom.tier"])
    }

    @Test("retry delays double up to the maximum, with jitter")
    func retry() {
        let policy = RetryPolicy(attempts: 5, initialDelay: 1, maximumDelay: 3)
        for _ in 0..<50 {
            #expect((0.75...1.25).contains(policy.delay(before: 2)))
            #expect((1.5...2.5).contains(policy.delay(before: 3)))
            #expect((2.25...3.75).contains(policy.delay(before: 5)))
        }
        #expect(RetryPolicy(attempts: 0).attempts == 1)
    }

    @Test("key store names and collection identifiers cannot leave their folders")
    func names() throws {
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", String(repeating: "a", count: 201), "a b", "ä"] {
            #expect(!KeyStoreNames.isValid(bad), "\(bad)")
        }
        #expect(KeyStoreNames.isValid("model-key.0123abcd") && KeyStoreNames.isValid("device-key"))
        for bad in ["", ".", "..", "a/b", "../x", String(repeating: "a", count: 101), "a b"] {
            #expect(!CollectionCache.isValidIdentifier(bad), "\(bad)")
        }
        #expect(CollectionCache.isValidIdentifier("FlowerModels") && CollectionCache.isValidIdentifier("a.b_c-1"))
        #expect(throws: CofferError.self) { try CollectionCache(root: URL(fileURLWithPath: "/tmp"), identifier: "../etc") }
    }

    @Test("the file key store keeps values in 0600 files in a 0700 folder, replaced atomically")
    func fileKeyStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-keys-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileKeyStore(directory: folder.appendingPathComponent("keys"))
        #expect(try store.load("device-key") == nil)
        try store.save("device-key", Data([1, 2, 3]))
        try store.save("device-key", Data([4, 5]))
        #expect(try store.load("device-key") == Data([4, 5]))
        let file = try FileManager.default.attributesOfItem(atPath: folder.path + "/keys/device-key")
        let dir = try FileManager.default.attributesOfItem(atPath: folder.path + "/keys")
        #expect(file[.posixPermissions] as? Int == 0o600 && dir[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/keys") == ["device-key"])
        try store.remove("device-key")
        try store.remove("device-key")
        #expect(try store.load("device-key") == nil)
        #expect(throws: CofferError.self) { try store.save("../escape", Data()) }
    }

    @Test("a cache folder that belongs to another user, or is shared like /tmp, is refused and left as it is")
    func foreignFolders() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-folders-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        // Shared: a sticky folder anyone may write to.
        let shared = base + "/shared"
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o1777) == 0)
        #expect(throws: CofferError.self) { try FileKeyStore.makePrivateFolder(shared) }
        #expect((try FileManager.default.attributesOfItem(atPath: shared)[.posixPermissions] as? Int) == 0o1777)
        // Another user's: as root, a folder given to nobody; otherwise "/", which is root's.
        let foreign: String
        if geteuid() == 0 {
            foreign = base + "/foreign"
            #expect(mkdir(foreign, 0o755) == 0 && chown(foreign, 65534, 65534) == 0)
        } else {
            foreign = "/"
        }
        let before = try FileManager.default.attributesOfItem(atPath: foreign)[.posixPermissions] as? Int
        #expect(throws: CofferError.self) { try FileKeyStore.makePrivateFolder(foreign) }
        #expect((try FileManager.default.attributesOfItem(atPath: foreign)[.posixPermissions] as? Int) == before)
        // One's own folder that others can read is made private.
        let own = base + "/own"
        #expect(mkdir(own, 0o755) == 0 && chmod(own, 0o755) == 0)
        try FileKeyStore.makePrivateFolder(own)
        #expect((try FileManager.default.attributesOfItem(atPath: own)[.posixPermissions] as? Int) == 0o700)
        // A name that mkdir finds taken although nothing was there a moment before (here a link to
        // nowhere; in life another process's folder made meanwhile) is checked, not taken as made:
        // a link is refused as one, and nothing is made where it points.
        let dangling = base + "/dangling"
        #expect(symlink(base + "/nowhere", dangling) == 0)
        let refusal = #expect(throws: CofferError.self) { try FileKeyStore.makePrivateFolder(dangling) }
        #expect(refusal.map { "\($0)".contains("is a symbolic link") } == true, "\(String(describing: refusal))")
        #expect(!FileManager.default.fileExists(atPath: base + "/nowhere"))
    }

    @Test("a configuration never shows its credential: description, debug description, dump")
    func configurationIsRedacted() throws {
        let secret = "cfa_" + String(repeating: "s3cr3t", count: 6)
        let configuration = try CofferConfiguration(serverURL: URL(string: "https://models.example.com")!, appID: UUID().uuidString,
                                                    credential: secret, publicKey: "q3Jv8yE6kQ4m6Zl2Qm9C1j0s8mQ5dJc9yT3lQm2bW1E=",
                                                    cacheDirectory: URL(fileURLWithPath: "/tmp/x"))
        var dumped = ""
        dump(configuration, to: &dumped)
        for shown in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(shown.contains("models.example.com") && shown.contains("redacted"), "\(shown)")
            #expect(!shown.contains("s3cr3t"), "the credential is shown: \(shown)")
        }
    }

    @Test("a configuration that cannot work is refused before any request")
    func configuration() throws {
        let key = "q3Jv8yE6kQ4m6Zl2Qm9C1j0s8mQ5dJc9yT3lQm2bW1E="
        #expect(throws: CofferError.self) { try CofferConfiguration.publicKey("not base64") }
        #expect(throws: CofferError.self) { try CofferConfiguration.publicKey(Data(count: 31).base64EncodedString()) }
        let good = try CofferConfiguration(serverURL: URL(string: "https://models.example.com")!, appID: UUID().uuidString,
                                           credential: "c", publicKey: key, cacheDirectory: URL(fileURLWithPath: "/tmp/x"))
        #expect(throws: Never.self) { try good.validate() }
        var bad = good
        bad.serverURL = URL(string: "ftp://models.example.com")!
        #expect(throws: CofferError.self) { try bad.validate() }
        bad = good
        bad.appID = "not-a-uuid"
        #expect(throws: CofferError.self) { try bad.validate() }
        bad = good
        bad.deviceID = "a|b"
        #expect(throws: CofferError.self) { try bad.validate() }

        // Plain http:// only to this machine, unless allowed: the credential would cross the network.
        for local in ["http://127.0.0.1:8080", "http://localhost", "http://127.8.9.10", "http://[::1]:9000"] {
            var plain = good
            plain.serverURL = URL(string: local)!
            #expect(throws: Never.self, "\(local)") { try plain.validate() }
        }
        for remote in ["http://models.example.com", "http://10.0.0.7:8080", "http://127.0.0.1.example.com", "http://[::2]", "http://128.0.0.1"] {
            var plain = good
            plain.serverURL = URL(string: remote)!
            #expect(throws: CofferError.self, "\(remote)") { try plain.validate() }
            plain.allowsInsecureHTTP = true
            #expect(throws: Never.self, "\(remote) allowed") { try plain.validate() }
        }
        #expect(PlainHTTPPolicy.allowedByEnvironment(["COFFER_ALLOW_INSECURE_HTTP": "1"]))
        #expect(!PlainHTTPPolicy.allowedByEnvironment(["COFFER_ALLOW_INSECURE_HTTP": "0"]))
        #expect(!PlainHTTPPolicy.allowedByEnvironment([:]))
    }
}
