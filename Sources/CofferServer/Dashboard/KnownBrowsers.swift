import Crypto
import Foundation
import Vapor

/// Browsers that signed in to an account before, so that someone guessing at an account's
/// password cannot keep its holder out.
///
/// Sign-in attempts are limited per email address. Counted alone, that budget is a lock anyone can
/// turn: a few wrong passwords a minute with a victim's address, from anywhere, and the victim's
/// own correct sign-in is refused too. So a successful sign-in leaves a cookie naming the account's
/// email address and the time, with an HMAC under a key derived from the master key (so every
/// instance checks it, and nobody without the master key makes one). An attempt that carries a
/// valid cookie for the address it names is counted in a budget of that cookie's own; the
/// address's shared budget counts only attempts from browsers it has not seen. Someone who spends
/// the shared budget keeps out only browsers that never signed in to the account.
///
/// The cookie is no credential: it signs nobody in, and each cookie has a budget of its own, as
/// large as the shared one. It lasts ``lifetime``; a changed email address, or a new master key,
/// makes older cookies count as unknown browsers.
struct KnownBrowsers: Sendable {
    /// How long a cookie counts after the sign-in that left it.
    static let lifetime: TimeInterval = 180 * 86_400
    /// The longest cookie value read: seconds (at most 12 digits), a dot and a base64url HMAC.
    static let maximumLength = 64

    private let key: SymmetricKey
    let secureCookies: Bool

    init(masterKey: MasterKey, secureCookies: Bool) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey.key, info: Data("coffer dashboard known browser v1".utf8), outputByteCount: 32)
        self.secureCookies = secureCookies
    }

    /// The cookie's name (`__Host-` with secure cookies, as the session's).
    var cookieName: String { secureCookies ? "__Host-coffer_known" : "coffer_known" }

    /// The cookie for a browser that signed in to the account with `email` now.
    func cookie(for email: String, now: Date = Date()) -> HTTPCookies.Value {
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        return HTTPCookies.Value(string: "\(issued).\(Secrets.base64URL(mac(email: email, issued: issued)))",
                                 expires: now.addingTimeInterval(Self.lifetime), maxAge: nil, domain: nil, path: "/",
                                 isSecure: secureCookies, isHTTPOnly: true, sameSite: .strict)
    }

    /// The rate-limit key of a sign-in attempt for `email`: the browser's own when it carries a
    /// valid cookie for that address, else the address's shared one.
    func budgetKey(_ req: Request, email: String, now: Date = Date()) -> String {
        guard let value = req.cookies[cookieName]?.string, let tag = validTag(value, email: email, now: now) else {
            return "email:" + email
        }
        return "known:" + email + ":" + tag
    }

    /// The cookie's HMAC (base64url) when `value` is a cookie this server made for `email`, within
    /// its lifetime; nil for anything else.
    func validTag(_ value: String, email: String, now: Date) -> String? {
        guard value.utf8.count <= Self.maximumLength, let dot = value.firstIndex(of: ".") else { return nil }
        let seconds = value[..<dot], tag = String(value[value.index(after: dot)...])
        guard (1...12).contains(seconds.utf8.count), seconds.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let issued = Int64(seconds), let presented = Self.bytes(base64URL: tag)
        else { return nil }
        let age = now.timeIntervalSince1970 - Double(issued)
        // A minute of clock difference between instances is allowed; a cookie from the future is not.
        guard age > -60, age < Self.lifetime else { return nil }
        guard HMAC<SHA256>.isValidAuthenticationCode(presented, authenticating: Self.message(email: email, issued: issued), using: key)
        else { return nil }
        return tag
    }

    private func mac(email: String, issued: Int64) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Self.message(email: email, issued: issued), using: key))
    }

    private static func message(email: String, issued: Int64) -> Data {
        Data("\(email)\n\(issued)".utf8)
    }

    /// The 32 bytes of an unpadded base64url HMAC; nil for any other text.
    private static func bytes(base64URL text: String) -> Data? {
        guard text.utf8.count == 43 else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
        guard let data = Data(base64Encoded: standard), data.count == 32 else { return nil }
        return data
    }
}
