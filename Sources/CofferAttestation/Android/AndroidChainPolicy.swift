import Foundation
import SwiftASN1
import X509

/// The RFC 5280 checks Android attestation chains pass, for swift-certificates' `Verifier`
/// (which itself checks each signature and the issuer–subject name chaining).
///
/// Every certificate must be valid at the time given. Every issuer must be a CA (basic
/// constraints `CA:TRUE`) within its path length, except the one that signs the leaf: on older
/// factory-provisioned devices (Sony Xperia 10 III among them) that per-device batch certificate
/// says `CA:FALSE` and lacks `keyCertSign`, which is why Google's own verifier does not apply
/// PKIX basic constraints to these chains. Key usage is not checked, for the same reason.
///
/// Relaxing the leaf's issuer does not let an app forge a leaf with a key it had attested: that
/// key's certificate carries an attestation extension, and the verifier refuses a chain with the
/// extension anywhere but the leaf. Name constraints, which Android chains do not use, are not
/// handled, so a certificate marking them critical is refused.
struct AndroidChainPolicy: VerifierPolicy {
    let validationTime: Date

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints,
        .X509ExtensionID.keyUsage,
    ]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for (index, certificate) in chain.enumerated() {
            guard certificate.notValidBefore <= validationTime, validationTime <= certificate.notValidAfter else {
                return .failsToMeetPolicy(reason: "AndroidChainPolicy: certificate \(index) is not valid at the validation time")
            }
            guard index >= 2 else { continue }
            let constraints: BasicConstraints?
            do {
                constraints = try certificate.extensions.basicConstraints
            } catch {
                return .failsToMeetPolicy(reason: "AndroidChainPolicy: certificate \(index) has malformed basic constraints")
            }
            guard case .isCertificateAuthority(let maxPathLength) = constraints else {
                return .failsToMeetPolicy(reason: "AndroidChainPolicy: issuer \(index) is not a CA")
            }
            // The intermediates between this CA and the leaf; a trust anchor's own limit is not applied.
            let isRoot = index == chain.count - 1
            if let maxPathLength, !isRoot, index - 1 > maxPathLength {
                return .failsToMeetPolicy(reason: "AndroidChainPolicy: issuer \(index) exceeds its path length")
            }
        }
        return .meetsPolicy
    }
}
