/// The attributes of ``KeychainKeyStore``'s calls for one item, decided without the Security
/// framework so that tests on every platform check them; the store only turns each attribute into
/// its `kSec…` key and value.
///
/// Items are generic passwords named by service and account (the key store name), in the
/// data-protection keychain, and added readable only on this device after its first unlock.
struct KeychainQuery: Equatable, Sendable {
    /// One key and value of a query dictionary.
    enum Attribute: Equatable, Sendable {
        /// `kSecClass`: `kSecClassGenericPassword`.
        case genericPassword
        /// `kSecAttrService`.
        case service(String)
        /// `kSecAttrAccount`.
        case account(String)
        /// `kSecAttrAccessGroup`.
        case accessGroup(String)
        /// `kSecUseDataProtectionKeychain`: `true`. macOS only heeds it; elsewhere it is the only
        /// keychain there is.
        case dataProtectionKeychain
        /// `kSecAttrAccessible`: `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: readable in the
        /// background once the device has been unlocked after it started; never synced, never
        /// restored to another device.
        case accessibleAfterFirstUnlockThisDeviceOnly
        /// `kSecReturnData`: `true`.
        case returnData
        /// `kSecMatchLimit`: `kSecMatchLimitOne`.
        case matchLimitOne
    }

    /// Which of macOS's two keychain implementations holds the items.
    enum Keychain: Equatable, Sendable {
        /// The data-protection keychain: the one on every other platform, and on macOS for a
        /// process signed with a keychain entitlement (an application identifier or
        /// `keychain-access-groups`).
        case dataProtection
        /// The file-based (login) keychain, for a macOS process without such an entitlement, like
        /// an unsigned command-line tool.
        case file

        /// The keychain of a process whose probe (``KeychainQuery/probe``, a delete) returned
        /// `status`; nil when there was no probe (outside macOS).
        ///
        /// Only a write tells: a read of the data-protection keychain by a process without an
        /// entitlement finds nothing rather than failing, so the choice is made before the first
        /// read, not from the first failure. Any answer but `errSecMissingEntitlement` (none found,
        /// locked) means the process may use the data-protection keychain.
        static func choose(probe status: Int32?) -> Keychain {
            status.map(KeychainStatus.init) == .missingEntitlement ? .file : .dataProtection
        }
    }

    let service: String
    let account: String
    let accessGroup: String?
    let keychain: Keychain

    /// The query of item `account` of `service`, in `accessGroup` if one is given, in `keychain`.
    /// An access group needs the data-protection keychain: with the file-based one it is refused,
    /// rather than ignored.
    init(service: String, account: String, accessGroup: String?, keychain: Keychain) throws(CofferError) {
        if keychain == .file, let accessGroup {
            throw .invalidConfiguration("the Keychain access group \(accessGroup) needs the data-protection keychain, which this process may not use (errSecMissingEntitlement); sign it with an application identifier")
        }
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.keychain = keychain
    }

    /// What finds the item: the query of an update and of a delete.
    var item: [Attribute] {
        [.genericPassword, .service(service), .account(account)]
            + (accessGroup.map { [.accessGroup($0)] } ?? [])
            + (keychain == .dataProtection ? [.dataProtectionKeychain] : [])
    }

    /// The query of a read: the item's data.
    var read: [Attribute] { item + [.returnData, .matchLimitOne] }

    /// The attributes of an add, besides the value. The file-based keychain has no accessibility
    /// classes (its items are as locked as the keychain file), so it is given none.
    var add: [Attribute] {
        item + (keychain == .dataProtection ? [.accessibleAfterFirstUnlockThisDeviceOnly] : [])
    }

    /// The delete that decides a macOS process's keychain (``Keychain/choose(probe:)``): in the
    /// data-protection keychain, of an account no key store name can be (names never start with
    /// `.`), so it never removes anything.
    static let probe: [Attribute] = [.genericPassword, .service("coffer"), .account(".keychain-probe"), .dataProtectionKeychain]

    /// The default service for an app: `coffer.` and its bundle identifier, or `coffer` for a
    /// process without one (a command-line tool).
    static func defaultService(bundleIdentifier: String?) -> String {
        guard let bundleIdentifier, !bundleIdentifier.isEmpty else { return "coffer" }
        return "coffer." + bundleIdentifier
    }
}
