@testable import CofferServer
import Fluent
import Foundation
import Testing

/// Several servers in one process (as in the tests, or an operator's embedding), each with write
/// transactions queued behind one another: none may starve the others of threads.
@Suite("SQLite under concurrent writers")
struct SQLiteStarvationTests {
    /// Before each application had its own thread pool, the writers waiting for SQLite's lock
    /// filled the process-wide pool (one thread per core) and the transaction holding the lock
    /// never got a thread to commit: every database of the process stopped. Three servers with
    /// eight writers each, every transaction holding the lock across a pause, must all finish.
    /// The starvation never ends, so the time limit only stops a hang: it is six minutes because in
    /// CI's full parallel run the three server starts alone took most of one minute, and once (a run
    /// whose tests took 582 s instead of about 400) the whole test process stalled past three.
    @Test("write transactions of several servers in one process all finish", .timeLimit(.minutes(6)))
    func writersOfSeveralServersFinish() async throws {
        var servers: [TestServer] = []
        for _ in 0..<3 { servers.append(try await TestServer.start()) }
        defer { for server in servers { Task { try? await server.stop() } } }
        let finished = try await withThrowingTaskGroup(of: Int.self) { group in
            for server in servers {
                for _ in 0..<8 {
                    group.addTask {
                        try await server.app.db.writeTransaction { db in
                            try await Task.sleep(for: .milliseconds(20))
                            return try await AuditRecord.query(on: db).count()
                        }
                    }
                }
            }
            return try await group.reduce(0) { count, _ in count + 1 }
        }
        #expect(finished == 24)
    }
}
