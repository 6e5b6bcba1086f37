import Foundation
import NIOConcurrencyHelpers
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
        #expect(try await hashing.verify("a password long enough", created: hash, as: .known))
        #expect(try await hashing.verify("another password", created: hash, as: .known) == false)
        await hashing.shutdown()
    }

    @Test("past its bound a check is refused at once with 503 busy and Retry-After; the admitted ones finish")
    func bounded() async throws {
        // One thread, at most one check waiting or running; a cost-14 hash takes about a second.
        let hashing = PasswordHashing(cost: 14, threads: 1, maximumWaiting: 1)
        let slow = try Bcrypt.hash("a password long enough", cost: 14)
        let first = Task { try await hashing.verify("a password long enough", created: slow, as: .known) }
        while hashing.inProgress == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        do {
            _ = try await hashing.verify("a password long enough", created: slow, as: .known)
            Issue.record("a second check was taken while the first held the only place")
        } catch let error as APIError {
            #expect(error.status == .serviceUnavailable && error.code == "busy")
            #expect(error.headers.first(name: "Retry-After") == "5")
        }
        #expect(try await first.value)
        #expect(hashing.inProgress == 0)
        #expect(try await hashing.verify("a password long enough", created: slow, as: .known))
        await hashing.shutdown()
    }

    @Test("strangers take at most three quarters of the places; the rest is kept for known browsers and members")
    func placesKeptForTheKnown() async throws {
        let hashing = PasswordHashing(cost: 4, threads: 1, maximumWaiting: 32)
        #expect(hashing.strangerPlaces == 24)
        let hash = try await hashing.hash("a password long enough")
        // With the thread held, an admitted check waits in the queue and a refused one ends at once.
        let held = try await HeldHashingThread(hashing)
        let refused = NIOLockedValueBox(0)
        func check(as caller: PasswordHashing.Caller) -> Task<String, Never> {
            Task {
                do {
                    return try await hashing.verify("a password long enough", created: hash, as: caller) ? "admitted" : "wrong"
                } catch {
                    refused.withLockedValue { $0 += 1 }
                    return (error as? APIError)?.code ?? "\(error)"
                }
            }
        }
        let strangers = (0..<25).map { _ in check(as: .stranger) }
        try await waitUntil("each stranger queued or refused") { hashing.inProgress + refused.withLockedValue { $0 } == 25 }
        let known = (0..<9).map { _ in check(as: .known) }
        try await waitUntil("each known caller queued or refused") { hashing.inProgress + refused.withLockedValue { $0 } == 34 }
        try await held.release()
        var strangerAnswers: [String] = [], knownAnswers: [String] = []
        for task in strangers { strangerAnswers.append(await task.value) }
        for task in known { knownAnswers.append(await task.value) }
        #expect(strangerAnswers.sorted() == Array(repeating: "admitted", count: 24) + ["busy"], "\(strangerAnswers)")
        #expect(knownAnswers.sorted() == Array(repeating: "admitted", count: 8) + ["busy"], "\(knownAnswers)")
        #expect(hashing.inProgress == 0)
        await hashing.shutdown()
    }
}
