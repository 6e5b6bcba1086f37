/// What the result code of a Keychain call means to ``KeychainKeyStore``, and the error it throws.
///
/// Compiled on every platform, without the Security framework, so that the mapping is tested on
/// Linux too: the codes are the `OSStatus` values of Apple's `Security/SecBase.h`, by their names
/// there.
enum KeychainStatus: Equatable, Sendable {
    /// `errSecSuccess`.
    case success
    /// `errSecItemNotFound`: no item matches.
    case notFound
    /// `errSecDuplicateItem`: an add found the item already there.
    case duplicate
    /// `errSecMissingEntitlement`: the process may not use the data-protection keychain, or not
    /// the access group it named.
    case missingEntitlement
    /// `errSecInteractionNotAllowed`: the Keychain is locked (the device has not been unlocked
    /// since it started, or a macOS keychain is locked and may not ask). Transient.
    case locked
    /// Any other code.
    case failed(Int32)

    /// `OSStatus` values from `Security/SecBase.h`.
    enum Code {
        static let success: Int32 = 0 // errSecSuccess
        static let userCanceled: Int32 = -128 // errSecUserCanceled
        static let notAvailable: Int32 = -25291 // errSecNotAvailable
        static let authFailed: Int32 = -25293 // errSecAuthFailed
        static let duplicateItem: Int32 = -25299 // errSecDuplicateItem
        static let itemNotFound: Int32 = -25300 // errSecItemNotFound
        static let noDefaultKeychain: Int32 = -25307 // errSecNoDefaultKeychain
        static let interactionNotAllowed: Int32 = -25308 // errSecInteractionNotAllowed
        static let missingEntitlement: Int32 = -34018 // errSecMissingEntitlement
    }

    /// The meaning of `code`, an `OSStatus` a `SecItem` function returned.
    init(_ code: Int32) {
        switch code {
        case Code.success: self = .success
        case Code.itemNotFound: self = .notFound
        case Code.duplicateItem: self = .duplicate
        case Code.missingEntitlement: self = .missingEntitlement
        case Code.interactionNotAllowed: self = .locked
        default: self = .failed(code)
        }
    }

    /// What a store call does with the Keychain, as its error messages say it.
    enum Operation: String, Sendable {
        case read, save, remove
    }

    /// The error of an `operation` that ended with this status; `accessGroup` is the store's.
    ///
    /// A locked Keychain is ``CofferError/keyStoreUnavailable(_:)``, which an app retries once the
    /// device is unlocked; everything else is ``CofferError/invalidConfiguration(_:)``, as nothing
    /// but a change to the app or its signing makes it work. One line, naming the code; never an
    /// item's name or value.
    func error(_ operation: Operation, accessGroup: String?) -> CofferError {
        switch self {
        case .locked:
            return .keyStoreUnavailable("the Keychain is locked until the device is unlocked (errSecInteractionNotAllowed); try again then")
        case .missingEntitlement:
            if let accessGroup {
                return .invalidConfiguration("the app is not entitled to the Keychain access group \(accessGroup) (errSecMissingEntitlement); add it to the app's keychain-access-groups")
            }
            return .invalidConfiguration("the app may not use the Keychain (errSecMissingEntitlement); sign it with an application identifier")
        default:
            return .invalidConfiguration("the Keychain refused to \(operation.rawValue) an item: \(name)")
        }
    }

    /// The code's name in `SecBase.h` with its value, or the value alone.
    var name: String {
        switch self {
        case .success: return "errSecSuccess (0)"
        case .notFound: return "errSecItemNotFound (\(Code.itemNotFound))"
        case .duplicate: return "errSecDuplicateItem (\(Code.duplicateItem))"
        case .missingEntitlement: return "errSecMissingEntitlement (\(Code.missingEntitlement))"
        case .locked: return "errSecInteractionNotAllowed (\(Code.interactionNotAllowed))"
        case .failed(Code.userCanceled): return "errSecUserCanceled (\(Code.userCanceled))"
        case .failed(Code.notAvailable): return "errSecNotAvailable (\(Code.notAvailable))"
        case .failed(Code.authFailed): return "errSecAuthFailed (\(Code.authFailed))"
        case .failed(Code.noDefaultKeychain): return "errSecNoDefaultKeychain (\(Code.noDefaultKeychain))"
        case .failed(let code): return "OSStatus \(code)"
        }
    }
}
