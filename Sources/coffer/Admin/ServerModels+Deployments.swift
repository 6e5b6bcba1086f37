import ModelInspection
/// The server's JSON objects for model collections, deployments and manifests (docs/openapi.json).
extension API {
    struct Collection: Codable {
        let id: String
        let identifier: String
        let team: String
        let description: String
        let models: [String]
        /// Grows with every activation and rollback.
        let sequence: Int64
        let activeDeploymentID: String?
        let createdAt: String?
    }

    /// A model version: one sealed container under one model name of a collection.
    struct Version: Codable {
        let versionID: String
        let sha256: String
        let size: Int64
        let keyID: String
        /// What the team recorded is inside it (`coffer blob upload --key`), if it did.
        let facts: ModelReport?
    }

    struct Deployment: Codable {
        let id: String
        let collection: String
        let name: String
        /// draft, active or archived.
        let status: String
        let models: [String: Version]
        let rules: [Rule]
        let createdBy: String
        let createdAt: String?
        let activatedAt: String?
        /// Why it cannot be activated; empty when it can.
        let problems: [String]
        /// Its newest staged rollout, if it had one.
        let rollout: Rollout?

        struct Rule: Codable {
            let condition: String
            let models: [String: Version]
        }
    }

    /// A staged rollout (docs/ROLLOUTS.md).
    struct Rollout: Codable {
        /// staged, completed, halted or superseded.
        let state: String
        let stages: [Int]
        let stageIndex: Int
        let stagePercent: Int
        let stageStartedAt: String
        let nextStageAt: String?
        let stageHours: Double
        let haltAt: Double
        let minReports: Int
        let haltReason: String?
        let createdBy: String
    }

    /// `GET …/deployments/:deployment/status`: a rollout's stage and its devices' reports.
    struct DeploymentStatus: Codable {
        struct ModelHealth: Codable { let model: String; let devices: Int; let failed: Int; let failureRate: Double }
        struct Reason: Codable { let reason: String; let count: Int }
        let deployment: String
        let name: String
        let state: String
        let rollout: Rollout?
        let devices: Int
        let outcomes: [String: Int]
        let models: [ModelHealth]
        let failureRate: Double
        let topReasons: [Reason]
    }

    /// The options of a staged activation.
    struct ActivationOptions: Encodable {
        let stages: [Int]
        let stageHours: Double?
        let haltAt: Double?
        let minReports: Int?
    }

    /// The reason of a halt by hand.
    struct HaltInput: Encodable { let reason: String? }

    /// One line of a collection's activation history.
    struct Activation: Codable {
        let sequence: Int64
        let deploymentID: String
        let deploymentName: String
        /// activate, rollback, "stage N %" or halt.
        let kind: String
        let actor: String
        let at: String?
    }

    /// `GET /v1/signing-key`: the public key that signs manifests.
    struct SigningKey: Codable {
        let algorithm: String
        let keyID: String
        let publicKey: String
    }

    /// Request bodies.
    struct NewCollection: Encodable { let identifier: String; let description: String?; let models: [String] }

    /// A deployment to create, or the changes of a clone: model name → blob address (SHA-256).
    /// Absent fields are not sent (a clone keeps the source's).
    struct DeploymentInput: Encodable {
        var name: String?
        var models: [String: String]?
        var rules: [RuleInput]?

        struct RuleInput: Encodable {
            let condition: String
            let models: [String: String]
        }
    }
}
