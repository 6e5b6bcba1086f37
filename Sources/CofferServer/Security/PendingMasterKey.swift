import Fluent
import Foundation
import Vapor
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The new master key of a rotation of `DATA_DIR/master.key`, in `DATA_DIR/master.key.next` while
/// the rotation runs.
///
/// The rotation writes it (0600, synced with its folder) in its transaction, after re-wrapping the
/// keys and before the commit, and renames it over `master.key` after the commit (synced again). A
/// crash or a power cut in between leaves it; the next start, or the next rotation, settles it by
/// the database's record (``CurrentMasterKeyRecord``): it names the pending key, and the rotation is
/// finished (renamed), or it names the key in `master.key`, and the rotation is undone (removed).
/// Settling holds the record as writers of wrapped keys do, so it waits for a rotation still
/// running and never takes that rotation's file for a leftover.
enum PendingMasterKey {
    /// Where the pending key of the master key file `keyFile` is.
    static func path(for keyFile: String) -> String { keyFile + ".next" }

    /// How lines name the pending key's file (a start's refusal and `check`'s are the same line).
    static let what = "the pending master key file"

    /// The key in the pending file `pending`, nil when there is none to read: nothing there any
    /// more (another process settled it), or a torn write: a file ``MasterKey/readFile(at:what:)``
    /// takes (regular, this account's or root's, private) that a power cut left without a whole
    /// key — empty, cut short, or zeros where the key had not reached the disk, never more than a
    /// rotation writes (``MasterKey/writtenFileSize``).
    ///
    /// Anything else stops the command with one line naming the file and what to do, never the
    /// key, and is neither moved nor removed (settling would remove it, or put it in place of
    /// `master.key`): a file this account may not open (another account's 0600 file), one its
    /// group or others may read or write, one that is not a regular file (a pipe, a folder), a link
    /// to a missing file, or more bytes than a rotation writes that hold no key.
    ///
    /// - Throws: ``RefusedSecretFile`` (the rule's refusals and a file this account may not open:
    ///   `rotate-master-key` exits 77), else ``ServerSetupError``.
    static func readKey(at pending: String, what: String = what) throws -> MasterKey? {
        guard let bytes = try MasterKey.readFile(at: pending, what: what) else { return nil }
        do {
            return try MasterKey.decode(bytes, from: pending, what: what)
        } catch {
            guard bytes.count <= MasterKey.writtenFileSize else {
                throw ServerSetupError("\(what) \(pending) holds no master key and is longer than a rotation writes, "
                                       + "so no power cut left it: move it away")
            }
            return nil
        }
    }

    /// Writes `key` as the pending key of `keyFile`; a pending file already holding `key` (the
    /// rotation's transaction run again) is kept.
    static func write(_ key: MasterKey, for keyFile: String) throws {
        let pending = path(for: keyFile)
        if SecretFile.entryExists(at: pending) {
            guard (try? MasterKey.read(at: pending))?.id == key.id else {
                throw ServerSetupError("\(pending) holds another key: an earlier rotation was not settled; start the server once, then rotate again")
            }
            return
        }
        try SecretFile.create(at: pending, contents: key.fileContents)
    }

    /// Where the key a rotation replaced is kept: `master.key.previous-ID`.
    static func previousPath(for keyFile: String, id: String) -> String { keyFile + ".previous-" + id }

    /// Puts the pending key `key` in place of `keyFile`, once the stored keys are wrapped by it; the
    /// key it replaces is kept beside it first (``previousPath(for:id:)``, 0600): a database restored
    /// from before the rotation (a backup, a point-in-time recovery, a replica that lost the commit)
    /// still has the key that opens it. No pending file and `keyFile` holding `key` is success:
    /// another process finished it. A pending file holding another key is refused, not moved: it is
    /// another rotation's.
    static func finish(_ key: MasterKey, for keyFile: String) throws {
        let pending = path(for: keyFile)
        if SecretFile.entryExists(at: pending) {
            guard (try? MasterKey.read(at: pending))?.id == key.id else {
                throw ServerSetupError("\(pending) holds another key than master key \(key.id), which the stored keys are wrapped by: "
                                       + "another rotation ran meanwhile; start the server once to settle it")
            }
            if let replaced = try MasterKey.read(at: keyFile), replaced.id != key.id {
                try keep(replaced, at: previousPath(for: keyFile, id: replaced.id))
            }
        }
        guard rename(pending, keyFile) == 0 else {
            let failure = errno
            if failure == ENOENT, (try? MasterKey.read(at: keyFile))?.id == key.id { return }
            throw ServerSetupError("cannot move \(pending) to \(keyFile) (\(String(cString: strerror(failure)))): "
                                   + "the stored keys are wrapped by the key in \(pending) now; move it there by hand")
        }
        // The rename must outlive a power cut: the database relies on the new key already.
        try SecretFile.synchronizeFolder(of: keyFile)
    }

    /// Keeps `replaced` at `kept` before `master.key` is replaced. A file there that holds it (a
    /// finish run again) is kept; one a crash left while it was written (what ``readKey(at:what:)``
    /// takes for a torn write: empty, cut short) is written again — skipping it, the rename below
    /// would leave the replaced key nowhere; anything else (another key, a file refused by the
    /// rule) stops the finish before `master.key` changes.
    private static func keep(_ replaced: MasterKey, at kept: String) throws {
        let what = "the previous master key file"
        if SecretFile.entryExists(at: kept) {
            if let held = try readKey(at: kept, what: what) {
                guard held.id == replaced.id else {
                    throw ServerSetupError("\(what) \(kept) holds master key \(held.id), not \(replaced.id), which it is named for: move it away")
                }
                return
            }
            guard unlink(kept) == 0 || errno == ENOENT else {
                throw ServerSetupError("cannot remove \(kept) (\(String(cString: strerror(errno)))), left without a key by a crash")
            }
        }
        try SecretFile.create(at: kept, contents: replaced.fileContents)
    }

    /// Settles a rotation of `keyFile` that stopped between writing the pending key and renaming
    /// it: finishes it when the database records the pending key, undoes it when it records the
    /// key in `keyFile` or none (the rotation did not commit), and refuses when it records another.
    /// Returns what was done, for the log; nil when nothing was pending.
    static func settle(_ keyFile: String, on database: any Database) async throws -> String? {
        let pending = path(for: keyFile)
        guard SecretFile.entryExists(at: pending) else { return nil }
        return try await database.writeTransaction { db -> String? in
            // Waits for a rotation still running: it holds the record until it commits.
            let recorded = try await CurrentMasterKey.read(on: db, holding: true)
            // Another process settled it while this one waited.
            guard SecretFile.entryExists(at: pending) else { return nil }
            // A pending file that holds no key was being written when the power went: the rotation
            // had not committed (it commits only once the file is synced). One that is not such a
            // torn write (refused by the rule, not ours to open, not a regular file) stops the
            // start with its line, before anything is moved or removed.
            if let next = try Self.readKey(at: pending), recorded == next.id {
                try Self.finish(next, for: keyFile)
                return "finished the master key rotation a crash interrupted: \(keyFile) now holds master key \(next.id), which the stored keys are wrapped by"
            }
            let current = try MasterKey.read(at: keyFile)
            guard recorded == nil || recorded == current?.id else {
                throw ServerSetupError("the stored keys are wrapped by master key \(recorded ?? ""), held neither by \(keyFile) nor by \(pending): "
                                       + "put the file that holds it at \(keyFile), or set COFFER_MASTER_KEY")
            }
            guard unlink(pending) == 0 || errno == ENOENT else {  // ENOENT: another process settled it meanwhile
                throw ServerSetupError("cannot remove \(pending) (\(String(cString: strerror(errno)))), left by a master key rotation that did not commit")
            }
            try SecretFile.synchronizeFolder(of: pending)
            return "removed \(pending), left by a master key rotation that did not commit; the stored keys stay wrapped by the key in \(keyFile)"
        }
    }
}

extension MasterKey {
    /// The master key a server runs with: a rotation of `DATA_DIR/master.key` a crash interrupted is
    /// settled first (``PendingMasterKey``), then the key is loaded (``load(base64:path:)``), checked
    /// against the stored keys and recorded as current (``CurrentMasterKey/claim(_:on:)``).
    static func loadChecked(_ configuration: ServerConfiguration, on database: any Database, logger: Logger) async throws -> MasterKey {
        let keyFile = configuration.dataDirectory + "/master.key"
        if configuration.masterKeyBase64 == nil, let settled = try await PendingMasterKey.settle(keyFile, on: database) {
            logger.notice("\(settled)")
        }
        let key = try MasterKey.load(base64: configuration.masterKeyBase64, path: keyFile)
        if let corrected = try await CurrentMasterKey.claim(key, on: database) { logger.notice("\(corrected)") }
        return key
    }
}
