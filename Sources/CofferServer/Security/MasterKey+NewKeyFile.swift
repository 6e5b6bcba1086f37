import CofferFormat

extension MasterKey {
    /// The new master key of `coffer-server rotate-master-key --new-key-file FILE`: it will wrap
    /// every model key, so the file is held to the CLI's rule for secret files
    /// (``SecretFileProblem``) on the descriptor that is then read — a file another account could
    /// have written, or one others may read or write, is refused before a byte of it is read, and
    /// so before the database is opened. A pipe (`<(…)`) is taken; at most ``maximumFileSize`` bytes.
    ///
    /// - Throws: ``RefusedSecretFile`` for a file the rule refuses; ``ServerSetupError`` for one
    ///   that cannot be read, is too large or holds no key (naming the file, never its contents).
    static func readNew(at path: String) throws -> MasterKey {
        let what = "the new master key file"
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, atMost: maximumFileSize + 1) { info in
                if let refused = RefusedSecretFile(info, what: what, path: path, allowingPipes: true) { throw refused }
            }
        } catch let failure as IOFailure {
            throw ServerSetupError("cannot read \(what) \(path): \(failure.reason)")
        }
        return try decode(bytes, from: path, what: what)
    }
}
