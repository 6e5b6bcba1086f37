import Foundation

extension ModelCollection {
    /// Why a collection serves its last known good models (docs/SDK.md, "Last known good"): the
    /// model that failed on this device, which the cache refuses to adopt again until a newer
    /// deployment names another model for ``modelName``.
    public struct Fallback: Sendable, Equatable {
        /// The model's name in the collection.
        public let modelName: String
        /// The SHA-256 of the sealed model that failed.
        public let sha256: String
        /// The deployment it came from.
        public let deploymentID: String
        /// The manifest sequence it came from: the cache accepts no older manifest from now on.
        public let sequence: UInt64
        /// The bounded reason reported (at most 200 bytes, no paths or secrets).
        public let reason: String
        /// When it failed.
        public let failedAt: Date

        init(_ model: FailedModels.Model) {
            modelName = model.model
            sha256 = model.sha256
            deploymentID = model.deploymentID
            sequence = model.sequence
            reason = model.reason
            failedAt = model.at
        }
    }
}
