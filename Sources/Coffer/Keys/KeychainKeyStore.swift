#if canImport(Security)
import Foundation
import Security

/// The platform key store on Apple platforms: generic-password items in the data-protection
/// keychain, readable only on this device after its first unlock
/// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so they are not synced or restored to
/// another device. Keychain items outlive a reinstall of the app; the SDK re-fetches nothing it
/// still has.
///
/// On macOS, a process without a keychain entitlement (an application identifier or
/// `keychain-access-groups`), such as an unsigned command-line tool, may not use the
/// data-protection keychain; its items go to the file-based login keychain instead. That is
/// decided once per process, before its first call, by a delete of an item that cannot exist:
/// only writes fail for such a process (`errSecMissingEntitlement`), its reads just find nothing.
///
/// Until the device is first unlocked after it starts, calls throw
/// ``CofferError/keyStoreUnavailable(_:)``: try again once it has been.
public struct KeychainKeyStore: KeyStore {
    /// The items' service attribute.
    public let service: String
    /// The access group to share the items with app extensions, or nil. It needs the
    /// data-protection keychain, and the group in the app's `keychain-access-groups` entitlement.
    public let accessGroup: String?

    /// A store for `service`, optionally in `accessGroup`.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// The value stored under `name`, or nil.
    public func load(_ name: String) throws -> Data? {
        let query = try self.query(name)
        var result: CFTypeRef?
        let status = KeychainStatus(SecItemCopyMatching(Self.dictionary(query.read) as CFDictionary, &result))
        switch status {
        case .success:
            guard let data = result as? Data else { throw CofferError.invalidConfiguration("the Keychain read an item without its data") }
            return data
        case .notFound:
            return nil
        default:
            throw status.error(.read, accessGroup: accessGroup)
        }
    }

    /// Stores `value` under `name`, replacing what was there, also when another thread or process
    /// adds it at the same moment.
    public func save(_ name: String, _ value: Data) throws {
        let query = try self.query(name)
        let item = Self.dictionary(query.item) as CFDictionary
        let update = [kSecValueData as String: value] as CFDictionary
        var attributes = Self.dictionary(query.add)
        attributes[kSecValueData as String] = value
        let add = attributes as CFDictionary
        let status = KeychainStatus.save(update: { SecItemUpdate(item, update) }, add: { SecItemAdd(add, nil) })
        guard status == .success else { throw status.error(.save, accessGroup: accessGroup) }
    }

    /// Removes `name`; nothing happens if it is absent.
    public func remove(_ name: String) throws {
        let query = try self.query(name)
        let status = KeychainStatus(SecItemDelete(Self.dictionary(query.item) as CFDictionary))
        guard status == .success || status == .notFound else { throw status.error(.remove, accessGroup: accessGroup) }
    }

    private func query(_ name: String) throws -> KeychainQuery {
        try KeychainQuery(service: service, account: name, accessGroup: accessGroup, keychain: Self.keychain)
    }

    /// This process's keychain: on macOS, probed once (the first time a store is used); elsewhere
    /// the data-protection keychain, the only one.
    private static let keychain: KeychainQuery.Keychain = {
        #if os(macOS)
        return .choose(probe: SecItemDelete(KeychainKeyStore.dictionary(KeychainQuery.probe) as CFDictionary))
        #else
        return .dataProtection
        #endif
    }()

    /// The query dictionary of `attributes`.
    private static func dictionary(_ attributes: [KeychainQuery.Attribute]) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for attribute in attributes {
            switch attribute {
            case .genericPassword: dictionary[kSecClass as String] = kSecClassGenericPassword
            case .service(let service): dictionary[kSecAttrService as String] = service
            case .account(let account): dictionary[kSecAttrAccount as String] = account
            case .accessGroup(let group): dictionary[kSecAttrAccessGroup as String] = group
            case .dataProtectionKeychain: dictionary[kSecUseDataProtectionKeychain as String] = true
            case .accessibleAfterFirstUnlockThisDeviceOnly:
                dictionary[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case .returnData: dictionary[kSecReturnData as String] = true
            case .matchLimitOne: dictionary[kSecMatchLimit as String] = kSecMatchLimitOne
            }
        }
        return dictionary
    }
}
#endif
