#if canImport(Security)
import Foundation
import Security

/// The platform key store on Apple platforms: generic-password items in the Keychain, readable
/// only on this device after its first unlock (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`),
/// so they are not synced or restored to another device. Keychain items outlive a reinstall of
/// the app; the SDK re-fetches nothing it still has.
public struct KeychainKeyStore: KeyStore {
    /// The items' service attribute.
    public let service: String
    /// The access group to share the items with app extensions, or nil.
    public let accessGroup: String?

    /// A store for `service`, optionally in `accessGroup`.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func load(_ name: String) throws -> Data? {
        var query = base(name)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw Self.failure(status, "read") }
        return data
    }

    public func save(_ name: String, _ value: Data) throws {
        let update: [String: Any] = [kSecValueData as String: value]
        let status = SecItemUpdate(base(name) as CFDictionary, update as CFDictionary)
        if status == errSecSuccess { return }
        guard status == errSecItemNotFound else { throw Self.failure(status, "update") }
        var add = base(name)
        add[kSecValueData as String] = value
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let added = SecItemAdd(add as CFDictionary, nil)
        guard added == errSecSuccess else { throw Self.failure(added, "add") }
    }

    public func remove(_ name: String) throws {
        let status = SecItemDelete(base(name) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure(status, "delete") }
    }

    private func base(_ name: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: name,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private static func failure(_ status: OSStatus, _ operation: String) -> CofferError {
        .invalidConfiguration("the Keychain refused to \(operation) an item (OSStatus \(status))")
    }
}
#endif
