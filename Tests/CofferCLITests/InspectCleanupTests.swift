import CofferFormat
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import coffer

/// `coffer inspect --key` restores a sealed folder into a private temporary folder; the plaintext
/// must be gone afterwards even when the folder it restored is read-only (modes are restored).
@Suite("coffer inspect --key leaves no plaintext behind")
struct InspectCleanupTests {
    @Test("a sealed folder with a read-only subfolder: the temporary copy is removed, without root's override too")
    func readOnlyFolder() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-inspect-cleanup-\(UUID())").path
        let model = work + "/Model.mlpackage"
        let temporary = work + "/tmp"
        try FileManager.default.createDirectory(atPath: model + "/Data/weights", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        try Data("weights".utf8).write(to: URL(fileURLWithPath: model + "/Data/weights/weight.bin"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: model + "/Manifest.json"))
        chmod(model + "/Data", 0o555)
        defer {
            chmod(model + "/Data", 0o755)
            TreeUnpacker.removeTree(work)
        }
        let key = KeyMaterial.modelKey(ModelKey.generate(name: "inspect"))
        try SealedModel.seal(contentsOf: model, to: work + "/model.coffer", using: key)
        for folder in [work, model] { chmod(folder, 0o755) }
        if geteuid() == 0 { chown(temporary, Unprivileged.uid, Unprivileged.gid) }

        // As root every removal succeeds whatever the modes, which hid the leak: the inspection
        // runs with an unprivileged file-system identity on a thread of its own.
        let restored = try Unprivileged.run {
            try? SealedInspection.inspect(work + "/model.coffer", name: "Model.mlpackage", using: key, temporaryFolder: temporary)
            return try FileManager.default.contentsOfDirectory(atPath: temporary)
        }
        #expect(restored.isEmpty, "left in the temporary folder: \(restored)")
    }
}

/// Runs a body on a new thread whose file-system user and group are `nobody` (Linux's per-thread
/// `setfsuid`, which also drops root's override of file modes), when the tests run as root.
enum Unprivileged {
    static let uid: uid_t = 65534
    static let gid: gid_t = 65534

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        guard geteuid() == 0 else { return try body() }
        typealias SetFileSystemID = @convention(c) (UInt32) -> Int32
        let setfsuid = unsafeBitCast(try #require(dlsym(nil, "setfsuid")), to: SetFileSystemID.self)
        let setfsgid = unsafeBitCast(try #require(dlsym(nil, "setfsgid")), to: SetFileSystemID.self)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, any Error>?
        let thread = Thread {
            _ = setfsgid(gid)
            _ = setfsuid(uid)
            if setfsuid(UInt32.max) == uid {
                result = Result(catching: body)
            } else {
                result = .failure(CocoaError(.featureUnsupported))
            }
            _ = setfsuid(0)
            _ = setfsgid(0)
            done.signal()
        }
        thread.start()
        done.wait()
        return try result!.get()
    }
}
