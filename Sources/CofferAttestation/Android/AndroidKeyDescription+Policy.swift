extension AndroidKeyDescription {
    /// Checks the description against the expected challenge and `policy`, in that order (the
    /// challenge, the security levels, the key's origin, the device's root of trust, the app);
    /// throws ``AttestationFailure/Code/invalid`` with a line per check.
    func check(expectedChallenge: [UInt8], policy: AndroidKeyAttestationPolicy) throws {
        guard attestationChallenge == expectedChallenge else {
            throw AttestationFailure.invalid("Android attestation challenge does not match the client data")
        }
        guard attestationSecurityLevel >= policy.minimumSecurityLevel else {
            throw AttestationFailure.invalid(
                "Android attestation security level \(attestationSecurityLevel.name) is below the policy's \(policy.minimumSecurityLevel.name)"
            )
        }
        guard keyMintSecurityLevel >= policy.minimumSecurityLevel else {
            throw AttestationFailure.invalid(
                "Android KeyMint security level \(keyMintSecurityLevel.name) is below the policy's \(policy.minimumSecurityLevel.name)"
            )
        }
        if let origin, origin != 0 {
            throw AttestationFailure.invalid("Android attestation is of a key imported into the device (origin \(origin)), not generated there")
        }
        if policy.requiresVerifiedBoot && policy.minimumSecurityLevel > .software {
            guard let rootOfTrust else {
                throw AttestationFailure.invalid("Android attestation has no hardware-enforced rootOfTrust")
            }
            guard rootOfTrust.deviceLocked else {
                throw AttestationFailure.invalid("Android attestation is from a device with an unlocked bootloader: its app identity cannot be trusted")
            }
            guard rootOfTrust.verifiedBootState == .verified else {
                throw AttestationFailure.invalid(
                    "Android attestation is from a device whose boot is \(rootOfTrust.verifiedBootState.name), not verified by its maker's key"
                )
            }
        }
        guard let application = attestationApplicationID else {
            throw AttestationFailure.invalid("Android key description has no attestationApplicationId")
        }
        guard application.packages.contains(where: { $0.name == policy.packageName }) else {
            throw AttestationFailure.invalid("Android attestation is not for package \(policy.packageName)")
        }
        guard application.signatureDigests.contains(where: policy.signingCertificateDigests.contains) else {
            throw AttestationFailure.invalid("Android attestation names no signing certificate the policy accepts")
        }
    }
}
