import Fluent
import Vapor

/// The checks on what a person types to get a dashboard sign-in: an email address and a password.
enum Credentials {
    /// Bcrypt reads at most 72 bytes; longer passwords are refused rather than silently cut.
    static let passwordBytes = 12...72

    /// A plausible address, lowercased: one `@`, no spaces or control characters, at most 254.
    static func email(_ text: String) throws -> String {
        let email = text.lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard (3...254).contains(email.count), parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7f })
        else { throw DashboardError.invalidForm("Enter an email address such as name@example.com.") }
        return email
    }

    /// A password of 12 to 72 bytes (UTF-8), without the NUL character: Bcrypt reads its input as
    /// a C string, so `a` followed by a NUL and anything would be stored as `a`.
    static func password(_ text: String) throws -> String {
        guard passwordBytes.contains(text.utf8.count) else {
            throw DashboardError.invalidForm("Choose a password of 12 to 72 characters (letters of other scripts count as more than one).")
        }
        guard !text.utf8.contains(0) else {
            throw DashboardError.invalidForm("Choose a password without the NUL character (U+0000): Bcrypt ignores what follows it.")
        }
        return text
    }

    /// Gives `user` an email address and password (Bcrypt, on the thread pool), refusing an address
    /// another user has.
    static func set(email: String, password: String, for user: UserRecord, on req: Request, db: any Database) async throws {
        if let other = try await UserRecord.query(on: db).filter(\.$email == email).first(), other.id != user.id {
            throw DashboardError.invalidForm("Another account already signs in with \(email).")
        }
        user.email = email
        user.passwordHash = try await req.passwordHashing.hash(password)
        try await user.update(on: db)
    }

    /// Whether some user can sign in already (then the first-owner set-up page is gone).
    static func anyoneCanSignIn(on db: any Database) async throws -> Bool {
        try await UserRecord.query(on: db).filter(\.$passwordHash != nil).count() > 0
    }
}
