import BlockingTestSupport
import Crypto
import Foundation
import GRDB
import SealedFields
import Testing

extension SealedFields {
    /// An independent Python reader, written from docs/SEALEDFIELDS.md alone, opens what SealedFields
    /// wrote: the spec says enough for a third party to read the format.
    @Suite struct Reference {
        static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Reference/open_sealed.py")

        static var pythonWithCryptography: Bool {
            (try? ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import cryptography"]))?.status == 0
        }

        @Test(.enabled(if: pythonWithCryptography, "needs python3 with the cryptography package (CI installs it)"))
        func pythonReaderOpensValuesAndChecksNoncesAndIndexes() async throws {
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("ref.sqlite"))
            try await dbQueue.write { try Item.createTable($0) }
            let raw = SymmetricKey(size: .bits256)
            let store = try SealedFieldsStore(dbQueue, key: .rawKey(raw))
            let item = Item(name: "Crème brûlée", identifier: "REF-42")
            try await dbQueue.write { try item.insert($0) }
            try store.rotate()
            let renamed = { var renamed = item; renamed.name = "Tarte Tatin"; return renamed }()  // name on key 2, identifier on key 1
            try await dbQueue.write { try renamed.update($0) }
            try dbQueue.close()

            func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
            let arguments = ["python3", Self.script.path, dir.path("ref.sqlite"), raw.withUnsafeBytes { hex($0) },
                             "item", hex(withUnsafeBytes(of: item.id.uuid) { Array($0) }), "name", "identifier", "creationDate"]
            let (status, output) = try await ProcessSlots.shared.run {
                let (status, output) = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, errorOutput: .file(.standardError))
                return (status, String(decoding: output, as: UTF8.self))
            }
            #expect(status == 0)
            #expect(output == "name=Tarte Tatin\nidentifier=REF-42\ncreationDate=2023-11-14 22:13:20.000\n")
        }
    }
}
