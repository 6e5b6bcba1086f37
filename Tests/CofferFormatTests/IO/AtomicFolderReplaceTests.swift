import Foundation
import Testing
@testable import CofferFormat

@Suite("Replacing a folder with --force survives a signal between its steps")
struct AtomicFolderReplaceTests {
    /// A folder holding `old/keep.txt` ("old") and an output that will replace it with a folder
    /// holding `new.txt` ("new").
    static func prepare() throws -> (root: String, final: String, output: AtomicOutput) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-replace-" + UUID().uuidString).path
        let final = root + "/model"
        try FileManager.default.createDirectory(atPath: final, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: final + "/keep.txt"))
        let output = try AtomicOutput(finalPath: final, replacing: true)
        try FileManager.default.createDirectory(atPath: output.temporaryPath, withIntermediateDirectories: false)
        try Data("new".utf8).write(to: URL(fileURLWithPath: output.temporaryPath + "/new.txt"))
        return (root, final, output)
    }

    /// What a signal's handler does (``AtomicOutput/discardAllPending()``), for this test's paths
    /// only: other suites in this process have outputs pending too.
    static func signal(under root: String) {
        AtomicOutput.discardPending(where: { $0.hasPrefix(root + "/") }, terminating: false)
    }

    static func names(_ path: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    @Test("with the exchange: a signal after it leaves the new folder; no temporary or old folder is left")
    func exchanged() throws {
        let exchange = try #require(AtomicOutput.exchangeRename)
        let (root, final, output) = try Self.prepare()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try output.commit(exchange: exchange, pause: {
            // A signal's handler removes what is pending: here, the old folder under the temporary name.
            Self.signal(under: root)
            #expect(Self.names(final) == ["new.txt"])
        })
        #expect(Self.names(final) == ["new.txt"])
        #expect(Self.names(root) == ["model"])
    }

    @Test("without the exchange: a signal between the renames puts the old folder back (before: both were removed)")
    func movedAside() throws {
        let (root, final, output) = try Self.prepare()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var seen: [String] = [], inAside: [String] = []
        #expect(throws: IOFailure.self) {
            try output.commit(exchange: nil, pause: {
                Self.signal(under: root)
                seen = Self.names(root)
                inAside = seen.filter { $0.hasSuffix("-old") }
            })
        }
        // At the signal the old folder was aside: the clean-up removed the new one and put the
        // old one back. The handler would end the process there; this test's commit goes on and
        // fails to move the removed new folder.
        #expect(seen == ["model"])
        #expect(inAside == [])
        #expect(Self.names(final) == ["keep.txt"])
        #expect(Self.names(root) == ["model"])
    }

    @Test("without a signal, both ways replace the folder and leave nothing beside it")
    func replaced() throws {
        for exchange in [AtomicOutput.exchangeRename, nil] {
            let (root, final, output) = try Self.prepare()
            defer { try? FileManager.default.removeItem(atPath: root) }
            try output.commit(exchange: exchange, pause: {})
            #expect(Self.names(final) == ["new.txt"])
            #expect(Self.names(root) == ["model"])
        }
    }
}
