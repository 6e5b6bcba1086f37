/// A master key that is not the one the database's keys need: the line a start stops with and
/// `coffer-server check` reports (``CurrentMasterKey/standing(of:on:holding:)``). Keys are named by
/// ID only (``MasterKey/id``: a hash's first digits, never the key).
///
/// When the given key is a file and a rotation kept the needed key beside it
/// (``PendingMasterKey/previousPath(for:id:)``), the database is from before that rotation (a
/// backup, a point-in-time recovery, a replica that lost the commit): the line says to put the kept
/// file back, or to use a database from after the rotation. Otherwise it says to give the right key.
struct MasterKeyMismatch: Error, CustomStringConvertible {
    /// What names the needed key, up to its ID: "the model keys are wrapped by", "the database records".
    let finding: String
    /// The ID of the master key the database needs.
    let needed: String
    /// The ID of the master key this server was given.
    let given: String
    /// The file the given key was read from; nil for COFFER_MASTER_KEY.
    let file: String?
    /// The rotation's kept copy of the needed key beside ``file``, when it is there.
    let kept: String?

    init(_ finding: String, needed: String, given key: MasterKey) {
        self.finding = finding
        self.needed = needed
        self.given = key.id
        self.file = key.file
        let kept = key.file.map { PendingMasterKey.previousPath(for: $0, id: needed) }
        self.kept = kept.flatMap { SecretFile.entryExists(at: $0) ? $0 : nil }
    }

    var description: String {
        let line = "\(finding) master key \(needed), but " + (file.map { "\($0) holds master key \(given)" } ?? "this server was given master key \(given)")
        guard let kept, let file else {
            return line + "; set COFFER_MASTER_KEY or DATA_DIR/master.key to the right key, or finish the rotation"
        }
        return line + ": the database is from before a rotation replaced that key, which \(kept) holds; put that file back as \(file) "
            + "(keep the one there now aside: a database from after the rotation needs it), or use a database from after the rotation"
    }
}
