import CofferFormat
import Crypto
import Foundation
import Vapor

/// Browsers that signed in to an account before, so that someone guessing at an account's
/// password cannot keep its holder out.
///
/// Sign-in attempts are limited per email address. Counted alone, that budget is a lock anyone can
/// turn: a few wrong passwords a minute with a victim's address, from anywhere, and the victim's
/// own correct sign-in is refused too. So a successful sign-in leaves a cookie naming the time,
/// with an HMAC of the account's email address, that time and the account's current password hash
/// under a key derived from the master key (so every instance checks it, and nobody without the
/// master key makes one). An attempt that carries a valid cookie for the address it names is
/// counted in a budget of that cookie's own; the address's shared budget counts only attempts from
/// browsers it has not seen. Someone who spends the shared budget keeps out only browsers that
/// never signed in to the account.
///
/// The cookie is no credential: it signs nobody in, and each cookie has a budget of its own, as
/// large as the shared one. It lasts ``lifetime``; a changed email address, a changed or cleared
/// password, or a new master key makes older cookies count as unknown browsers. The password is in
/// the MAC because only someone who knew it could have made the cookie: whoever once got in could
/// otherwise keep a cookie per second of sign-ins and, after the holder changed the password, try
/// guesses with a fresh budget each. The browser that changes the password is given a new cookie.
///
/// A budget is keyed by the 32 bytes of the MAC, not by the cookie's text: base64 decoders take
/// more than one spelling of the same bytes (`+` for `-`, the unused low bits of the last
/// character), and each spelling must not be a budget of its own.
struct KnownBrowsers: Sendable {
    /// How long a cookie counts after the sign-in that left it.
    static let lifetime: TimeInterval = 180 * 86_400
    /// The longest cookie value read: seconds (at most 12 digits), a dot and a base64url HMAC.
    static let maximumLength = 64

    private let key: SymmetricKey
    let secureCookies: Bool

    init(masterKey: MasterKey, secureCookies: Bool) {
        // v2: the password hash joined the MAC; v1 cookies count as unknown browsers.
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey.key, info: Data("coffer dashboard known browser v2".utf8), outputByteCount: 32)
        self.secureCookies = secureCookies
    }

    /// The cookie's name (`__Host-` with secure cookies, as the session's).
    var cookieName: String { secureCookies ? "__Host-coffer_known" : "coffer_known" }

    /// Marks the browser `response` goes to as known to `user`'s email address and current
    /// password; nothing for an account without either.
    func remember(_ user: UserRecord, on response: Response, now: Date = Date()) {
        guard let email = user.email, let passwordHash = user.passwordHash else { return }
        response.cookies[cookieName] = cookie(for: email, passwordHash: passwordHash, now: now)
    }

    /// The cookie for a browser that signed in now to the account with `email` and `passwordHash`.
    func cookie(for email: String, passwordHash: String, now: Date = Date()) -> HTTPCookies.Value {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        let mac = HMAC<SHA256>.authenticationCode(for: Self.message(email: email, issued: issued, passwordHash: passwordHash), using: key)
        return HTTPCookies.Value(string: "\(issued).\(Secrets.base64URL(Data(mac)))",
                                 expires: now.addingTimeInterval(Self.lifetime), maxAge: nil, domain: nil, path: "/",
                                 isSecure: secureCookies, isHTTPOnly: true, sameSite: .strict)
    }

    /// The HMAC of the valid cookie `req` carries for `email`, whose account has `passwordHash`
    /// (nil: no such account, or no password yet); nil when it carries none.
    func mac(presentedBy req: Request, email: String, passwordHash: String?, now: Date = Date()) -> Data? {
        guard let value = req.cookies[cookieName]?.string, let passwordHash else { return nil }
        return validMAC(value, email: email, passwordHash: passwordHash, now: now)
    }

    /// The rate-limit key of a sign-in attempt for `email`: the browser's own, named by the bytes
    /// of its valid cookie's `mac`, else (nil) the address's shared one.
    static func budgetKey(email: String, mac: Data?) -> String {
        guard let mac else { return "email:" + email }
        return "known:" + email + ":" + mac.hexString
    }

    /// The cookie's HMAC when `value` is a cookie this server made for `email` and `passwordHash`,
    /// within its lifetime; nil for anything else.
    func validMAC(_ value: String, email: String, passwordHash: String, now: Date) -> Data? {
        guard value.utf8.count <= Self.maximumLength, let dot = value.firstIndex(of: ".") else { return nil }
        let seconds = value[..<dot], tag = String(value[value.index(after: dot)...])
        guard (1...12).contains(seconds.utf8.count), seconds.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let issued = Int64(seconds), let presented = Self.bytes(base64URL: tag)
        else { return nil }
        let age = now.timeIntervalSince1970 - Double(issued)
        // A minute of clock difference between instances is allowed; a cookie from the future is not.
        guard age > -60, age < Self.lifetime else { return nil }
        let message = Self.message(email: email, issued: issued, passwordHash: passwordHash)
        guard HMAC<SHA256>.isValidAuthenticationCode(presented, authenticating: message, using: key) else { return nil }
        return presented
    }

    /// What the HMAC covers: the address and the time, then the SHA-256 of the password hash
    /// (fixed length, so no choice of address or hash runs into another's fields).
    private static func message(email: String, issued: Int64, passwordHash: String) -> Data {
        Data("\(email)\n\(issued)\n".utf8) + Data(SHA256.hash(data: Data(passwordHash.utf8)))
    }

    /// The 32 bytes of an unpadded base64url HMAC; nil for any other text.
    private static func bytes(base64URL text: String) -> Data? {
        guard text.utf8.count == 43 else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
        guard let data = Data(base64Encoded: standard), data.count == 32 else { return nil }
        return data
    }
}
