import X509

extension AppleAppAttestVerifier {
    /// Apple App Attestation Root CA, parsed once from ``appleRootPEM``.
    public static let appleRoot: Certificate = {
        do {
            return try Certificate(pemEncoded: appleRootPEM)
        } catch {
            // The PEM is a constant of this file, checked by AppleRootTests: failing to parse it is a
            // build defect, not an input error.
            fatalError("the embedded Apple App Attestation Root CA does not parse: \(error)")
        }
    }()

    /// Apple App Attestation Root CA (CN=Apple App Attestation Root CA, O=Apple Inc., ST=California;
    /// P-384; valid 2020-03-18 to 2045-03-15), as Apple publishes it at
    /// https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem.
    ///
    /// SHA-256 fingerprint (`openssl x509 -noout -fingerprint -sha256`):
    /// `1C:B9:82:3B:A2:8B:A6:AD:2D:33:A0:06:94:1D:E2:AE:4F:51:3E:F1:D4:E8:31:B9:F7:E0:FA:7B:62:42:C9:32`.
    /// Byte-identical copies in takimoto3/app-attest (`testdata/Apple_App_Attestation_Root_CA.pem`)
    /// and veehaitch/devicecheck-appattest (`AttestationValidator.kt`) agree with this fingerprint.
    static let appleRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----
        """
}
