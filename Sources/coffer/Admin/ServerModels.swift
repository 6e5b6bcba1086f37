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
        /// For a name that is not a member yet: the invitation made for them (code shown once).
        let invitation: CreatedInvitation?
    }

    struct CreatedInvitation: Codable {
        let id: String
        let team: String
        let role: String
        let note: String
        let expiresAt: String
        /// The code to give the person; shown once.
        let code: String
    }

    struct Invitation: Codable {
        let id: String
        let role: String
        let note: String
        let createdBy: String
        let createdAt: String?
        let expiresAt: String
        let state: String
        let acceptedBy: String?
        let acceptedAt: String?
        let revokedAt: String?
    }

    struct Joined: Codable {
        let team: String
        let role: String
    }

    struct Redeemed: Codable {
        let name: String
        let team: String
        let role: String
        let token: String
    }

    struct App: Codable {
        let id: String
        let name: String
        let platform: String
        let bundleID: String?
        /// The collections its devices may read.
        let collections: [String]?
        /// The attestation policy its devices' key requests must meet.
        let attestation: Attestation?
        let createdAt: String?
        let revokedAt: String?
        /// Present only in the answer that created or rotated it.
        let credential: String?
    }

    /// An app's attestation policy (docs/ATTESTATION.md).
    struct Attestation: Codable {
        var policy: String
        var appleTeamID: String?
        var bundleID: String?
        var appleEnvironment: String?
        var packageName: String?
        var signingCertificateDigests: [String]?
        var minimumSecurityLevel: String?
        var allowUnlockedDevices: Bool?

        /// One line for `app list`.
        var summary: String {
            switch policy {
            case "apple-app-attest": return "apple \(appleTeamID ?? "?").\(bundleID ?? "?") \(appleEnvironment ?? "production")"
            case "android-key-attestation":
                return "android \(packageName ?? "?") \(minimumSecurityLevel ?? "tee")+ (\(signingCertificateDigests?.count ?? 0) digests)"
                    + (allowUnlockedDevices == true ? " unlocked allowed" : "")
            default: return policy
            }
        }
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
    struct NewApp: Encodable {
        let name: String; let platform: String; let bundleID: String?; let collections: [String]?; let attestation: Attestation?
    }
    struct AppUpdate: Encodable { let collections: [String]?; let attestation: Attestation? }
    struct NewInvitation: Encodable { let role: String; let note: String?; let days: Double? }
    struct InvitationCode: Encodable { let code: String }
    struct Redemption: Encodable { let code: String; let name: String }
}
