import NIOConcurrencyHelpers
import NIOPosix
import Vapor

/// Bcrypt (cost 12) on a thread pool of its own, with a bounded queue.
///
/// Every sign-in, password check, welcome, set-up and account made with a password costs one
/// Bcrypt hash: a quarter of a second of a core, by design. On Vapor's shared pool it competed with
/// every SQLite statement and blob read, so anyone sending wrong passwords from many addresses
/// (an IPv6 /64 has 2^64) stalled the whole server (`/healthz` took seconds). Here at most
/// a quarter of the cores' worth of hashes run at a time, beside the database's pool rather than
/// on it, and at most 32 wait or run: more is refused at once with 503 `busy` and `Retry-After`,
/// before any work is done.
///
/// Strangers (``Caller/stranger``: sign-ins that carry no valid known-browser cookie, unknown
/// addresses included) may hold only three quarters of those places, so that a flood of them, which
/// anyone can send, leaves a quarter to known browsers and signed-in members, as the sign-in
/// budgets do (``KnownBrowsers``).
struct PasswordHashing: Sendable {
    /// Who asks for a hash or a check: the share of the queue it may take.
    enum Caller: Sendable {
        /// A sign-in from a browser the account has not seen, or for an address nobody has:
        /// admitted while fewer than ``PasswordHashing/strangerPlaces`` wait or run.
        case stranger
        /// A known browser's sign-in, a signed-in member's password, a password being chosen
        /// (after a token or an invitation code checked): admitted while any place is free.
        case known
    }

    /// Threads of a pool made without a number: a quarter of the cores, at least one.
    static let defaultThreads = max(1, System.coreCount / 4)
    /// Hashes waiting or running at most, without another number.
    static let defaultPlaces = 32

    /// The pool's threads (tests hold them to see the queue fill).
    let pool: NIOThreadPool
    private let pending: NIOLockedValueBox<Int>
    private let maximumWaiting: Int
    /// The places strangers may take: all but a quarter (rounded down) of them.
    let strangerPlaces: Int
    private let cost: Int

    /// A started pool of `threads` (``shutdown()`` ends it) taking at most `maximumWaiting` hashes
    /// at a time, waiting or running.
    init(cost: Int = 12, threads: Int = PasswordHashing.defaultThreads, maximumWaiting: Int = PasswordHashing.defaultPlaces) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        pending = NIOLockedValueBox(0)
        self.maximumWaiting = maximumWaiting
        strangerPlaces = maximumWaiting - maximumWaiting / 4
        self.cost = cost
    }

    /// Hashes waiting or running now.
    var inProgress: Int { pending.withLockedValue { $0 } }

    /// The Bcrypt hash of `password` (chosen after a check of who chooses it: any place).
    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await run(as: .known) { try Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`, for `caller`. A password with a NUL character matches
    /// nothing, without a check: Bcrypt would read it only up to the NUL, and no password is chosen
    /// with one (``Credentials/password(_:)``).
    func verify(_ password: String, created hash: String, as caller: Caller) async throws -> Bool {
        guard !password.utf8.contains(0) else { return false }
        return try await run(as: caller) { try Bcrypt.verify(password, created: hash) }
    }

    private func run<T: Sendable>(as caller: Caller, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let places = caller == .known ? maximumWaiting : strangerPlaces
        let admitted = pending.withLockedValue { count in
            guard count < places else { return false }
            count += 1
            return true
        }
        guard admitted else {
            throw APIError(.serviceUnavailable, "busy", "too many password checks are in progress; retry in 5 s",
                           headers: ["Retry-After": "5"])
        }
        defer { pending.withLockedValue { $0 -= 1 } }
        return try await pool.runIfActive(work)
    }

    func shutdown() async { try? await pool.shutdownGracefully() }
}

extension Application {
    private struct PasswordHashingKey: StorageKey { typealias Value = PasswordHashing }

    /// The server's Bcrypt pool (``PasswordHashing``), made with the dashboard's routes.
    var passwordHashing: PasswordHashing {
        get {
            guard let hashing = storage[PasswordHashingKey.self] else { fatalError("passwordHashing is set up by Dashboard.register") }
            return hashing
        }
        set { storage[PasswordHashingKey.self] = newValue }
    }
}

extension Request {
    /// The server's Bcrypt pool.
    var passwordHashing: PasswordHashing { application.passwordHashing }
}

/// Ends the Bcrypt pool with the application.
struct PasswordHashingShutdown: LifecycleHandler {
    let hashing: PasswordHashing
    func shutdownAsync(_ application: Application) async { await hashing.shutdown() }
}
