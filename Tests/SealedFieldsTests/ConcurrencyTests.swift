import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    @Suite struct Concurrency {
        @Test func manyReadersAndAWriterOnADatabasePool() async throws {
            let dir = try TemporaryDirectory()
            let dbPool = try DatabasePool(path: dir.path("pool.sqlite"))
            try await dbPool.write { try Item.createTable($0) }
            _ = try SealedFieldsStore(dbPool, key: passphrase("pool"))
            try await dbPool.write { db in for i in 0..<50 { try Item(name: "seed \(i)", identifier: "\(i)").insert(db) } }

            try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    for batch in 0..<20 {
                        try await dbPool.write { db in
                            for i in 0..<10 { try Item(name: "written \(batch)-\(i)", identifier: "w").insert(db) }
                        }
                        if batch == 10 { _ = try SealedFieldsStore.shared!.rotate() }
                        // Re-encryption in small batches while readers read and this task keeps writing.
                        if batch == 15 { try SealedFieldsStore.shared!.reencrypt(Item.self, batchSize: 20) }
                    }
                    return 0
                }
                for _ in 0..<6 {
                    group.addTask {
                        var reads = 0
                        var last = 0
                        while last < 250 {
                            let items = try await dbPool.read { try Item.fetchAll($0) }
                            #expect(items.count >= last)
                            #expect(items.allSatisfy { $0.name.hasPrefix("seed") || $0.name.hasPrefix("written") })
                            last = items.count
                            reads += 1
                        }
                        return reads
                    }
                }
                var total = 0
                for try await reads in group { total += reads }
                #expect(total >= 6)
            }
            #expect(try await dbPool.read { try Item.filter(sealed: "name", equals: "written 3-4").fetchCount($0) } == 1)
            try SealedFieldsStore.shared!.reencrypt(Item.self)
            try SealedFieldsStore.shared!.retire(version: 1)
            #expect(try await dbPool.read { try Item.fetchAll($0) }.count == 250)
        }
    }
}
