import Crypto
import CryptoExtras
import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct Keys {
        /// RFC 7914 section 12 vectors, through the scrypt SealedFields uses.
        @Test(arguments: [
            ("password", "NaCl", 1024, 8, 16,
             "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
            ("pleaseletmein", "SodiumChloride", 16384, 8, 1,
             "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
        ])
        func scryptMatchesRFC7914(password: String, salt: String, n: Int, r: Int, p: Int, expected: String) throws {
            let key = try KDF.Scrypt.deriveKey(
                from: Array(password.utf8), salt: Array(salt.utf8), outputByteCount: 64, rounds: n, blockSize: r, parallelism: p)
            #expect(key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() } == expected)
        }

        /// Opens `path` as a queue or as a pool (a pool's file is in WAL mode from its creation on).
        static func open(_ path: String, pool: Bool) throws -> any DatabaseWriter {
            pool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        }

        @Test(arguments: [false, true])
        func wrongPassphraseIsRefusedAndNothingIsWritten(pool: Bool) throws {
            let dir = try TemporaryDirectory()
            let path = dir.path("items.sqlite")
            do {
                let writer = try Self.open(path, pool: pool)
                try writer.write { try Item.createTable($0) }
                _ = try SealedFieldsStore(writer, key: passphrase("correct horse"))
                try writer.write { try Item(name: "Milk", identifier: "A-1").insert($0) }
                try writer.close()
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let filesBefore = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()

            for wrong in [passphrase("Correct horse"), passphrase("correct horse "), .rawKey(SymmetricKey(size: .bits256))] {
                let writer = try Self.open(path, pool: pool)
                #expect(throws: SealedFieldsError.wrongKey) { try SealedFieldsStore(writer, key: wrong, makeShared: false) }
                try writer.close()
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == filesBefore)
            }

            let writer = try Self.open(path, pool: pool)
            _ = try SealedFieldsStore(writer, key: passphrase("correct horse"))
            #expect(try writer.read { try Item.fetchAll($0).map(\.name) } == ["Milk"])
        }

        @Test func passphrasesAreComparedAfterUnicodeNormalization() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir, phrase: "caf\u{E9} cr\u{E8}me")
            try dbQueue.write { try Item(name: "x", identifier: "y").insert($0) }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("cafe\u{301} cre\u{300}me"))
            #expect(try dbQueue.read { try Item.fetchCount($0) } == 1)
            #expect(throws: SealedFieldsError.wrongKey) { try SealedFieldsStore(dbQueue, key: passphrase("cafe creme")) }
        }

        @Test func errorsCarryNeitherValuesNorPassphrases() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir, phrase: "hunter2-secret")
            try dbQueue.write { try Item(name: "Top secret name", identifier: "ID-SECRET").insert($0) }
            try dbQueue.write { try $0.execute(sql: "UPDATE item SET identifier = name") }
            do {
                _ = try dbQueue.read { try Item.fetchAll($0) }
                Issue.record("a moved ciphertext was opened")
            } catch {
                let text = "\(error) \(String(reflecting: error)) \(error.localizedDescription)"
                #expect(!text.contains("Top secret") && !text.contains("ID-SECRET") && !text.contains("hunter2"))
                #expect(error as? SealedFieldsError == .authenticationFailure(table: "item", column: "identifier"))
            }
            do {
                _ = try SealedFieldsStore(dbQueue, key: passphrase("hunter2-wrong"), makeShared: false)
            } catch {
                #expect(!"\(error)".contains("hunter2"))
            }
        }

        @Test func passphraseChangeRewrapsKeysWithoutTouchingRows() throws {
            let dir = try TemporaryDirectory()
            let (dbQueue, store) = try makeItemDatabase(dir, phrase: "old phrase")
            try dbQueue.write { db in
                for i in 0..<20 { try Item(name: "item \(i)", identifier: "\(i)").insert(db) }
            }
            let rows = try dbQueue.read { try Row.fetchAll($0, sql: "SELECT * FROM item ORDER BY id") }
            let wrappedBefore = try dbQueue.read { try Data.fetchAll($0, sql: "SELECT wrapped FROM sealedfields_keys") }

            #expect(throws: SealedFieldsError.wrongKey) {
                try store.changeKey(from: passphrase("not it"), to: passphrase("new phrase"))
            }
            #expect(try dbQueue.read { try Data.fetchAll($0, sql: "SELECT wrapped FROM sealedfields_keys") } == wrappedBefore)

            // Even when the app turned secure_delete off on its connection (builds differ in the default).
            try dbQueue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA secure_delete = OFF") }
            let verifierBefore = try dbQueue.read { try Data.fetchOne($0, sql: "SELECT verifier FROM sealedfields_meta") }!
            try store.changeKey(from: passphrase("old phrase"), to: passphrase("new phrase"))
            // The old wrapped keys and verifier are gone from the file, not left in free space.
            let file = try Data(contentsOf: URL(fileURLWithPath: dir.path("items.sqlite")))
            for old in wrappedBefore + [verifierBefore] { #expect(file.range(of: old) == nil) }
            #expect(try dbQueue.read { try Row.fetchAll($0, sql: "SELECT * FROM item ORDER BY id") } == rows)
            #expect(try dbQueue.read { try Data.fetchAll($0, sql: "SELECT wrapped FROM sealedfields_keys") } != wrappedBefore)

            #expect(throws: SealedFieldsError.wrongKey) { try SealedFieldsStore(dbQueue, key: passphrase("old phrase")) }
            _ = try SealedFieldsStore(dbQueue, key: passphrase("new phrase"))
            #expect(try dbQueue.read { try Item.fetchCount($0) } == 20)
            #expect(try dbQueue.read { try Item.fetchAll($0) }.map(\.name).sorted() == (0..<20).map { "item \($0)" }.sorted())

            let raw = SymmetricKey(size: .bits256)
            try SealedFieldsStore.shared!.changeKey(from: passphrase("new phrase"), to: .rawKey(raw))
            #expect(throws: SealedFieldsError.wrongKey) { try SealedFieldsStore(dbQueue, key: passphrase("new phrase")) }
            _ = try SealedFieldsStore(dbQueue, key: .rawKey(raw))
            #expect(try dbQueue.read { try Item.fetchCount($0) } == 20)
            #expect(try dbQueue.read { try Item.fetchAll($0) }.count == 20)
        }

        @Test("a key source never shows its passphrase or key: description, debug description, dump")
        func keySourceIsRedacted() {
            let raw = SymmetricKey(data: Array("0123456789abcdef0123456789ABCDEF".utf8))
            for (source, kind) in [(KeySource.passphrase("hunter2 is my passphrase"), "passphrase"), (.rawKey(raw), "rawKey")] {
                var dumped = ""
                dump(source, to: &dumped)
                for shown in ["\(source)", String(reflecting: source), dumped] {
                    #expect(shown.contains(kind) && shown.contains("redacted"), "\(shown)")
                    #expect(!shown.contains("hunter2") && !shown.contains("0123456789"), "\(shown)")
                }
            }
        }
    }
}
