import Testing
@testable import Coffer

/// What the Keychain's result codes mean to the key store, and the saving rule, on every platform:
/// the Security framework is not needed to check them.
@Suite("Keychain status")
struct KeychainStatusTests {
    @Test("the codes are SecBase.h's values")
    func codes() {
        #expect(KeychainStatus(0) == .success)
        #expect(KeychainStatus(-25300) == .notFound)
        #expect(KeychainStatus(-25299) == .duplicate)
        #expect(KeychainStatus(-34018) == .missingEntitlement)
        #expect(KeychainStatus(-25308) == .locked)
        for other: Int32 in [-25293, -25291, -25307, -128, -50, -1, 1, .min, .max] {
            #expect(KeychainStatus(other) == .failed(other))
        }
    }

    @Test("a locked Keychain is transient: keyStoreUnavailable, for every operation")
    func locked() {
        for operation in [KeychainStatus.Operation.read, .save, .remove] {
            let error = KeychainStatus.locked.error(operation, accessGroup: nil)
            guard case .keyStoreUnavailable(let reason) = error else {
                Issue.record("\(error)")
                continue
            }
            #expect(reason.contains("errSecInteractionNotAllowed"))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("anything else is a configuration error naming the code, never the item")
    func definite() {
        #expect(KeychainStatus.missingEntitlement.error(.save, accessGroup: "TEAM.group.shared")
            == .invalidConfiguration("the app is not entitled to the Keychain access group TEAM.group.shared (errSecMissingEntitlement); add it to the app's keychain-access-groups"))
        guard case .invalidConfiguration(let reason) = KeychainStatus.missingEntitlement.error(.read, accessGroup: nil) else {
            Issue.record("missing entitlement without a group")
            return
        }
        #expect(reason.contains("errSecMissingEntitlement"))
        #expect(KeychainStatus(-25293).error(.read, accessGroup: nil)
            == .invalidConfiguration("the Keychain refused to read an item: errSecAuthFailed (-25293)"))
        #expect(KeychainStatus(-25291).error(.remove, accessGroup: nil)
            == .invalidConfiguration("the Keychain refused to remove an item: errSecNotAvailable (-25291)"))
        #expect(KeychainStatus(-25299).error(.save, accessGroup: nil)
            == .invalidConfiguration("the Keychain refused to save an item: errSecDuplicateItem (-25299)"))
        #expect(KeychainStatus(-4).error(.save, accessGroup: nil) == .invalidConfiguration("the Keychain refused to save an item: OSStatus -4"))
    }

    /// A scripted Keychain: each call answers the next code of its script and is logged.
    final class Script {
        var updates: [Int32]
        var adds: [Int32]
        var calls: [String] = []
        init(updates: [Int32], adds: [Int32]) {
            self.updates = updates
            self.adds = adds
        }
        func save() -> KeychainStatus {
            KeychainStatus.save(update: { calls.append("update"); return updates.removeFirst() },
                                add: { calls.append("add"); return adds.removeFirst() })
        }
    }

    @Test("a save updates, else adds; an add that loses a race to another writer updates again")
    func save() {
        let existing = Script(updates: [0], adds: [])
        #expect(existing.save() == .success && existing.calls == ["update"])
        let new = Script(updates: [-25300], adds: [0])
        #expect(new.save() == .success && new.calls == ["update", "add"])
        let raced = Script(updates: [-25300, 0], adds: [-25299])
        #expect(raced.save() == .success && raced.calls == ["update", "add", "update"])
        // Added and removed again by others between each of our calls: bounded, then the last answer.
        let churn = Script(updates: Array(repeating: -25300, count: KeychainStatus.saveRounds),
                           adds: Array(repeating: -25299, count: KeychainStatus.saveRounds))
        #expect(churn.save() == .duplicate && churn.calls.count == 2 * KeychainStatus.saveRounds)
    }

    @Test("a save stops at the first answer that is not part of the race")
    func saveFailures() {
        let locked = Script(updates: [-25308], adds: [])
        #expect(locked.save() == .locked && locked.calls == ["update"])
        let lockedAdd = Script(updates: [-25300], adds: [-25308])
        #expect(lockedAdd.save() == .locked && lockedAdd.calls == ["update", "add"])
        let unentitled = Script(updates: [-34018], adds: [])
        #expect(unentitled.save() == .missingEntitlement && unentitled.calls == ["update"])
    }
}
