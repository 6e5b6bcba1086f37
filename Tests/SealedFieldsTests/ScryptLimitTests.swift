import Foundation
import GRDB
@testable import SealedFields
import Testing

extension SealedFields {
    /// scrypt parameters read from a database file are checked before anything is derived: a hostile
    /// or damaged file cannot make opening allocate gigabytes or trap on the arithmetic.
    @Suite struct ScryptLimits {
        /// A database created with cheap parameters, whose stored parameters are then replaced.
        func reopen(withStored logN: Int64, r: Int64, p: Int64) throws -> (any Error)? {
            let dir = try TemporaryDirectory()
            let (dbQueue, _) = try makeItemDatabase(dir)
            try dbQueue.write { db in
                try db.execute(
                    sql: "UPDATE sealedfields_meta SET scrypt_log_n = ?, scrypt_r = ?, scrypt_p = ?",
                    arguments: [logN, r, p])
            }
            do {
                _ = try SealedFieldsStore(dbQueue, key: passphrase("correct horse"))
                return nil
            } catch {
                return error
            }
        }

        @Test func parametersNeedingAGibibyteAreRefusedBeforeDeriving() throws {
            // 128 · 8 · 2^20 = 2^30 bytes: four times the limit. Deriving would take seconds and 1 GiB.
            let started = ContinuousClock.now
            let error = try reopen(withStored: 20, r: 8, p: 1)
            #expect(error as? SealedFieldsError == .scryptCostTooHigh)
            #expect(ContinuousClock.now - started < .seconds(2))
            #expect(!"\(error.map(String.init(describing:)) ?? "")".contains("correct horse"))
        }

        @Test(arguments: [
            (Int64(22), Int64(32), Int64(1)),       // 16 GiB, inside the old per-value ranges
            (Int64(63), Int64(32), Int64(1)),       // 128 · 32 · 2^63 overflows 64 bits
            (Int64(64), Int64(1), Int64(1)),        // a shift past 64 bits
            (Int64(255), Int64(UInt32.max), Int64(UInt32.max)),
        ])
        func overflowProneParametersAreRefused(logN: Int64, r: Int64, p: Int64) throws {
            #expect(try reopen(withStored: logN, r: r, p: p) as? SealedFieldsError == .scryptCostTooHigh)
        }

        @Test(arguments: [
            (Int64(0), Int64(8), Int64(1)), (Int64(10), Int64(0), Int64(1)), (Int64(10), Int64(8), Int64(0)),
            (Int64(10), Int64(8), Int64(17)), (Int64(256), Int64(8), Int64(1)), (Int64(-1), Int64(8), Int64(1)),
            (Int64(10), Int64(Int64.max), Int64(1)), (Int64(10), Int64(8), Int64.min),
        ])
        func outOfRangeParametersAreDamage(logN: Int64, r: Int64, p: Int64) throws {
            #expect(try reopen(withStored: logN, r: r, p: p) as? SealedFieldsError == .corruptKeyTables)
        }

        @Test func theLimitItselfIsAccepted() throws {
            #expect(ScryptParameters(logN: 18, r: 8).memoryBytes == 256 << 20)
            #expect(throws: Never.self) { try ScryptParameters(logN: 18, r: 8).checkLimits() }
            #expect(throws: SealedFieldsError.scryptCostTooHigh) { try ScryptParameters(logN: 18, r: 9).checkLimits() }
            #expect(ScryptParameters(logN: 64, r: 1).memoryBytes == nil)
            #expect(ScryptParameters(logN: 63, r: UInt32.max).memoryBytes == nil)
        }

        @Test func aNewStoreAsksForNoMoreThanTheLimitEither() throws {
            let dir = try TemporaryDirectory()
            let dbQueue = try DatabaseQueue(path: dir.path("items.sqlite"))
            #expect(throws: SealedFieldsError.scryptCostTooHigh) {
                _ = try SealedFieldsStore(dbQueue, key: .passphrase("correct horse", parameters: ScryptParameters(logN: 22, r: 32)))
            }
        }
    }
}
