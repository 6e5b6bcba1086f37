import Foundation
import X509

extension AndroidKeyAttestationVerifier {
    /// Parses a chain given as DER certificates, bounded in length and size.
    static func parse(chain: [[UInt8]]) throws -> [Certificate] {
        guard !chain.isEmpty else { throw AttestationFailure.invalid("Android attestation chain is empty") }
        guard chain.count <= maximumChainLength else {
            throw AttestationFailure.invalid("Android attestation chain has more than \(maximumChainLength) certificates")
        }
        return try chain.enumerated().map { index, der in
            guard der.count <= maximumCertificateSize else {
                throw AttestationFailure.invalid("certificate \(index) of the Android attestation chain is larger than \(maximumCertificateSize) bytes")
            }
            do {
                return try Certificate(derEncoded: der)
            } catch {
                throw AttestationFailure.invalid("certificate \(index) of the Android attestation chain is not a DER X.509 certificate")
            }
        }
    }

    /// The chain from `certificates`' leaf to one of ``trustedRoots``: signatures and names
    /// checked by swift-certificates' `Verifier`, validity and CA flags by ``AndroidChainPolicy`` at `time`.
    ///
    /// The root a device sends (the last certificate, self-issued) is not used: trust comes from
    /// ``trustedRoots``, where a later issuance of the same root key may stand in for an expired
    /// one the device still sends. The other certificates must be valid at `time`, which is
    /// checked first so that an expired certificate is named as such.
    func verifiedPath(_ certificates: [Certificate], at time: Date) async throws -> [Certificate] {
        var presented = certificates
        if presented.count > 1, let last = presented.last, last.subject == last.issuer {
            presented.removeLast()
        }
        for (index, certificate) in presented.enumerated() {
            if certificate.subject == certificate.issuer {
                throw AttestationFailure.invalid("certificate \(index) of the Android attestation chain is self-issued but not last")
            }
            if time < certificate.notValidBefore {
                throw AttestationFailure.invalid("certificate \(index) of the Android attestation chain is not valid yet")
            }
            if time > certificate.notValidAfter {
                throw AttestationFailure.invalid("certificate \(index) of the Android attestation chain has expired")
            }
        }
        guard let leaf = presented.first else { throw AttestationFailure.invalid("Android attestation chain is empty") }

        var verifier = Verifier(rootCertificates: CertificateStore(trustedRoots)) {
            AndroidChainPolicy(validationTime: time)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(presented.dropFirst()))
        guard case .validCertificate(let path) = result else {
            throw AttestationFailure.invalid("Android attestation chain does not lead to a trusted root")
        }
        return Array(path)
    }
}
