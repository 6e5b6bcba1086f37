import Crypto
import Foundation
import Testing
@testable import CofferFormat

@Suite("Key delivery (HPKE to a device)")
struct KeyDeliveryTests {
    @Test("a sealed key opens only for that device, that key ID and that private key")
    func binding() throws {
        let device = Curve25519.KeyAgreement.PrivateKey()
        let key = SymmetricKey(size: .bits256)
        let sealed = try KeyDelivery.seal(key, keyID: "k1", deviceID: "phone", to: device.publicKey)
        #expect(try KeyDelivery.open(sealed, keyID: "k1", deviceID: "phone", using: device) == key)
        #expect(!sealed.ciphertext.contains(key.withUnsafeBytes { Data($0) }))
        #expect(throws: ContainerError.authenticationFailure) { try KeyDelivery.open(sealed, keyID: "k2", deviceID: "phone", using: device) }
        #expect(throws: ContainerError.authenticationFailure) { try KeyDelivery.open(sealed, keyID: "k1", deviceID: "tablet", using: device) }
        #expect(throws: ContainerError.authenticationFailure) { try KeyDelivery.open(sealed, keyID: "k1", deviceID: "phone", using: .init()) }
        var tampered = sealed.ciphertext
        tampered[tampered.startIndex] ^= 1
        #expect(throws: ContainerError.authenticationFailure) {
            try KeyDelivery.open(.init(encapsulatedKey: sealed.encapsulatedKey, ciphertext: tampered), keyID: "k1", deviceID: "phone", using: device)
        }
    }

    @Test("the wire constants are the documented ones (docs/KEY-DELIVERY.md)")
    func constants() {
        #expect(KeyDelivery.suiteName == "HPKE-X25519-SHA256-ChaCha20Poly1305")
        #expect(KeyDelivery.info == Data("coffer key delivery v1".utf8))
        #expect(KeyDelivery.associatedData(keyID: "a", deviceID: "b") == Data("a|b".utf8))
    }
}
