extension S3Location {
    /// `scheme://host[:port]` as the operator wrote it (without the bucket): for messages.
    public var endpoint: String {
        "\(scheme)://\(authority(of: bracketedHost))"
    }

    /// The `Host` header and URL authority of every request: the port only when it is not the
    /// scheme's default, the bucket in front for virtual addressing.
    public var hostHeader: String {
        authority(of: addressing == .virtual ? bucket + "." + bracketedHost : bracketedHost)
    }

    /// The encoded path of the bucket itself (`/bucket` path-style, `/` virtual).
    public var bucketPath: String {
        addressing == .path ? "/" + bucket : "/"
    }

    /// The encoded path of `key` (under ``keyPrefix``): each byte outside RFC 3986's unreserved set
    /// as `%XX`, `/` kept. The same text is sent and signed.
    /// - Throws: ``S3Error/invalidArgument(_:)`` for an empty key, one over 1024 bytes with its prefix,
    ///   or one with `.`/`..` segments or control characters, which HTTP libraries and proxies may
    ///   rewrite so that the signed path is not the one that arrives.
    public func encodedPath(forKey key: String) throws(S3Error) -> String {
        let full = keyPrefix + key
        guard !key.isEmpty, full.utf8.count <= 1024 else {
            throw .invalidArgument("an object key must be 1–1024 bytes with its prefix")
        }
        guard !full.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }),
              !full.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw .invalidArgument("an object key may not hold '.' or '..' segments or control characters")
        }
        let encoded = SigV4Encoding.encode(full, keepSlash: true)
        return addressing == .path ? "/" + bucket + "/" + encoded : "/" + encoded
    }

    /// The full URL of `encodedPath` with `query` (already in canonical form, or empty).
    func url(encodedPath: String, query: String) -> String {
        "\(scheme)://\(hostHeader)\(encodedPath)\(query.isEmpty ? "" : "?" + query)"
    }

    private var bracketedHost: String {
        host.contains(":") ? "[" + host + "]" : host
    }

    private func authority(of name: String) -> String {
        guard let port, port != (scheme == "https" ? 443 : 80) else { return name }
        return name + ":" + String(port)
    }
}
