import Vapor

extension RateLimiter {
    /// Runs a redemption of an invitation code (API and dashboard) as a limit on failures per client
    /// address: refused at once with 429 when the address used its budget; an unknown, used,
    /// revoked or expired code (404, 410), or a name or email address another account has (409
    /// `account_exists`; not a signed-in member accepting again),
    /// counts against it. So one pending code cannot be tried again and again (each try of a free
    /// name with a password costs a Bcrypt hash, and a taken one tells whose it is).
    func redeeming<T>(_ req: Request, _ body: () async throws -> T) async throws -> T {
        let address = "address:" + AddressBudget.key(req.clientAddress)
        if let wait = exhausted(address) { throw TokenAuthenticator.tooMany(wait) }
        do {
            return try await body()
        } catch let error as APIError where error.status == .notFound || error.status == .gone || error.code == Invitations.accountExists {
            _ = acquire(address)
            throw error
        }
    }
}
