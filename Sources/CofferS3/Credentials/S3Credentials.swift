/// The access key pair (and optional session token) every request to the store is signed with.
///
/// The secret and the token never leave this value as text: `description`, `debugDescription`,
/// `dump` and string interpolation show the access key ID only, so a credentials value logged by
/// mistake (or captured in an error) does not leak what signs requests.
public struct S3Credentials: Sendable, Equatable {
    /// The public half of the key pair (`AWS_ACCESS_KEY_ID`), sent in every request's scope.
    public let accessKeyID: String
    /// The secret half (`AWS_SECRET_ACCESS_KEY`); only the signer reads it.
    let secretAccessKey: String
    /// A temporary session token (`AWS_SESSION_TOKEN`), sent as `x-amz-security-token` when present.
    let sessionToken: String?

    /// Credentials for signing; `sessionToken` only for temporary credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// Whether a session token is present (without showing it).
    public var hasSessionToken: Bool { sessionToken != nil }
}

extension S3Credentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access key ID and whether there is a token; never the secret or the token.
    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>\(hasSessionToken ? ", sessionToken: <redacted>" : ""))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the access key ID and redaction markers only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["accessKeyID": accessKeyID, "secretAccessKey": "<redacted>", "sessionToken": hasSessionToken ? "<redacted>" : "none"],
            displayStyle: .struct
        )
    }
}
