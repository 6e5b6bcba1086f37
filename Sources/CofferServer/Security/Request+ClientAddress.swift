import Vapor

extension Application {
    private struct TrustedProxiesKey: StorageKey { typealias Value = TrustedProxies }

    /// The proxies whose `X-Forwarded-For` this server believes (none unless configured).
    var trustedProxies: TrustedProxies {
        get { storage[TrustedProxiesKey.self] ?? .none }
        set { storage[TrustedProxiesKey.self] = newValue }
    }
}

extension Request {
    /// The address of the client behind any trusted proxies (see ``TrustedProxies``): what rate
    /// limits and the audit log key on. "unknown" when the connection has no IP peer.
    var clientAddress: String {
        application.trustedProxies.client(peer: remoteAddress?.ipAddress, forwardedFor: headers[.xForwardedFor]) ?? "unknown"
    }
}
