/// The server's JSON objects (docs/openapi.json, components/schemas), with its field names: they
/// are decoded from answers and printed as they are by `--json`. Times stay ISO 8601 text.
enum API {
    struct Team: Codable {
        let id: String
        let name: String
        let role: String
    }

    struct CreatedToken: Codable {
        let id: String
        let name: String
        let token: String
        let prefix: String
    }

    struct Token: Codable {
        let id: String
        let name: String
        let prefix: String
        let createdAt: String?
        let lastUsedAt: String?
        let revokedAt: String?
    }

    struct Member: Codable {
        let name: String
        let role: String
        /// The first API token of an account the request created; shown once.
        let token: String?
    }

    struct App: Codable {
        let id: String
        let name: String
        let platform: String
        let bundleID: String?
        let createdAt: String?
        let revokedAt: String?
        /// Present only in the answer that created or rotated it.
        let credential: String?
    }

    struct ModelKey: Codable {
        let id: String
        let name: String
        let team: String
        let createdAt: String?
        let revokedAt: String?
    }

    struct AuditEvent: Codable {
        let at: String?
        let action: String
        let actor: String
        let target: String
        let outcome: String
        let reason: String?
        let deviceID: String?
    }

    struct Blob: Codable {
        let sha256: String
        let size: Int64
        let created: Bool
    }

    /// Request bodies.
    struct Name: Encodable { let name: String }
    struct NewMember: Encodable { let name: String; let role: String }
    struct NewApp: Encodable { let name: String; let platform: String; let bundleID: String? }
}
