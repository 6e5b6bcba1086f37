import Testing
@testable import Coffer

/// Which attributes the Keychain key store's calls carry, and which keychain a macOS process uses,
/// on every platform.
@Suite("Keychain queries")
struct KeychainQueryTests {
    @Test("items are this device's, after first unlock, in the data-protection keychain")
    func dataProtection() throws {
        let query = try KeychainQuery(service: "coffer.com.example.app", account: "device-key", accessGroup: nil, keychain: .dataProtection)
        #expect(query.item == [.genericPassword, .service("coffer.com.example.app"), .account("device-key"), .dataProtectionKeychain])
        #expect(query.read == query.item + [.returnData, .matchLimitOne])
        #expect(query.add == query.item + [.accessibleAfterFirstUnlockThisDeviceOnly])
        // Finding an item never depends on how it was added.
        #expect(!query.item.contains(.accessibleAfterFirstUnlockThisDeviceOnly))
        #expect(!query.read.contains(.accessibleAfterFirstUnlockThisDeviceOnly))
    }

    @Test("an access group is part of every query")
    func accessGroup() throws {
        let query = try KeychainQuery(service: "coffer", account: "device-id", accessGroup: "TEAM.group.shared", keychain: .dataProtection)
        for attributes in [query.item, query.read, query.add] {
            #expect(attributes.contains(.accessGroup("TEAM.group.shared")) && attributes.contains(.dataProtectionKeychain))
        }
    }

    @Test("the file-based keychain gets neither the data-protection flag nor an accessibility, and no access group")
    func file() throws {
        let query = try KeychainQuery(service: "coffer", account: "device-id", accessGroup: nil, keychain: .file)
        #expect(query.item == [.genericPassword, .service("coffer"), .account("device-id")])
        #expect(query.add == query.item)
        #expect(query.read == query.item + [.returnData, .matchLimitOne])
        #expect(throws: CofferError.self) {
            try KeychainQuery(service: "coffer", account: "device-id", accessGroup: "TEAM.group.shared", keychain: .file)
        }
    }

    @Test("only errSecMissingEntitlement from the probe sends a macOS process to the file-based keychain")
    func choose() {
        #expect(KeychainQuery.Keychain.choose(probe: -34018) == .file)
        for status: Int32? in [nil, 0, -25300, -25308, -25291, -25293] {
            #expect(KeychainQuery.Keychain.choose(probe: status) == .dataProtection)
        }
    }

    @Test("the probe deletes, in the data-protection keychain, an account no key store name can be")
    func probe() {
        #expect(KeychainQuery.probe.contains(.dataProtectionKeychain))
        #expect(!KeychainQuery.probe.contains(.returnData))
        let accounts = KeychainQuery.probe.compactMap { attribute -> String? in
            if case .account(let account) = attribute { return account }
            return nil
        }
        #expect(accounts.count == 1 && accounts.allSatisfy { !KeyStoreNames.isValid($0) })
    }

    @Test("the default service is per app: coffer.BUNDLE-ID, or coffer without one")
    func defaultService() {
        #expect(KeychainQuery.defaultService(bundleIdentifier: "com.example.app") == "coffer.com.example.app")
        #expect(KeychainQuery.defaultService(bundleIdentifier: nil) == "coffer")
        #expect(KeychainQuery.defaultService(bundleIdentifier: "") == "coffer")
    }
}
