import Foundation
import Testing
import Vapor
@testable import CofferServer

/// Bcrypt runs on a pool of its own with a bounded queue: a flood of sign-ins is refused at the
/// door instead of taking the threads SQLite and blob reads run on.
@Suite struct PasswordHashingTests {
    @Test("hashes and checks as Bcrypt does")
    func roundTrip() async throws {
        let hashing = PasswordHashing(cost: 4)
        let hash = try await hashing.hash("a password long enough")
        #expect(hash.hasPrefix("$2b$04$"))
        #expect(try await hashing.verify("a password long enough", created: hash))
        #expect(try await hashing.verify("another password", created: hash) == false)
        await hashing.shutdown()
    }

    @Test("past its bound a check is refused at once with 503 busy and Retry-After; the admitted ones finish")
    func bounded() async throws {
        // One thread, at most one check waiting or running; a cost-14 hash takes about a second.
        let hashing = PasswordHashing(cost: 14, threads: 1, maximumWaiting: 1)
        let slow = try Bcrypt.hash("a password long enough", cost: 14)
        let first = Task { try await hashing.verify("a password long enough", created: slow) }
        while hashing.inProgress == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        do {
            _ = try await hashing.verify("a password long enough", created: slow)
            Issue.record("a second check was taken while the first held the only place")
        } catch let error as APIError {
            #expect(error.status == .serviceUnavailable && error.code == "busy")
            #expect(error.headers.first(name: "Retry-After") == "5")
        }
        #expect(try await first.value)
        #expect(hashing.inProgress == 0)
        #expect(try await hashing.verify("a password long enough", created: slow))
        await hashing.shutdown()
    }
}
