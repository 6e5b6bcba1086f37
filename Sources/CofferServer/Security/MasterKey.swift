import CofferFormat
import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that encrypts every model key at rest (envelope encryption). It never enters the
/// database: it comes from COFFER_MASTER_KEY or `DATA_DIR/master.key` (created 0600 on first start;
/// a file others may read is refused, ``readFile(at:what:)``).
struct MasterKey: Sendable {
    let key: SymmetricKey
    /// The first 16 hex digits of SHA-256(key): names the master key in wrapped rows without revealing it.
    let id: String
    /// The file the key was read from (`DATA_DIR/master.key`, a rotation's new key file); nil when
    /// it came from COFFER_MASTER_KEY or was made in memory. Errors about the key name it.
    var file: String?

    init(key: SymmetricKey) throws {
        guard key.bitCount == 256 else { throw ServerSetupError("the master key must be 32 bytes (base64)") }
        self.key = key
        self.id = String(key.withUnsafeBytes { SHA256.hash(data: Data($0)) }.hexString.prefix(16))
    }

    /// Decodes a base64 master key.
    init(base64: String) throws {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            throw ServerSetupError("the master key must be 32 bytes, base64-encoded")
        }
        try self.init(key: SymmetricKey(data: data))
    }

    /// The most bytes a master key file may hold: 44 characters of base64 and some white space.
    static let maximumFileSize = 4096

    /// The bytes of a master key file as the server writes one (``fileContents``): 44 characters
    /// of base64 and a line break.
    static let writtenFileSize = 45

    /// The key from `base64` if given, else read from `path`, else created there (mode 0600) when
    /// no file is there. A file that is there but cannot be read, or holds something else, is an
    /// error naming the file (never its contents): a new key would orphan every wrapped model key.
    static func load(base64: String?, path: String) throws -> MasterKey {
        if let base64 { return try MasterKey(base64: base64) }
        if let key = try read(at: path) { return key }
        var key = try MasterKey(key: SymmetricKey(size: .bits256))
        key.file = path
        try SecretFile.create(at: path, contents: key.fileContents)
        return key
    }

    /// The key in the file at `path`, nil when there is nothing at that path; a file that cannot
    /// be read or holds no key is an error naming the file (`what`; never its contents), and one
    /// others may read or write is refused (``readFile(at:what:)``).
    static func read(at path: String, what: String = "the master key file") throws -> MasterKey? {
        guard let bytes = try readFile(at: path, what: what) else { return nil }
        return try decode(bytes, from: path, what: what)
    }

    /// The key in `bytes`, read from the file at `path` (`what` names it in the error, never its
    /// contents): 32 bytes in base64, white space around them allowed.
    static func decode(_ bytes: [UInt8], from path: String, what: String = "the master key file") throws -> MasterKey {
        guard bytes.count <= maximumFileSize else {
            throw ServerSetupError("\(what) \(path) is larger than \(maximumFileSize) bytes")
        }
        var key: MasterKey
        do { key = try MasterKey(base64: String(decoding: bytes, as: UTF8.self)) } catch {
            throw ServerSetupError("\(what) \(path) does not hold 32 bytes in base64")
        }
        key.file = path
        return key
    }

    /// What a master key file holds: the key in base64 and a line break.
    var fileContents: Data {
        Data((key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n").utf8)
    }

    /// The bytes of the master key file at `path` (`what` names it in errors), nil when there is
    /// nothing at that path; at most ``maximumFileSize`` + 1 bytes are read
    /// (``decode(_:from:what:)`` refuses more than ``maximumFileSize``), from a regular file only
    /// (`/dev/zero` or a pipe would never end). A link to a missing file is an error, not "none": a
    /// new key cannot be made through it and would not be the one that wrapped the stored keys.
    ///
    /// The file is held to the rule for secret files (``SecretFileProblem``, as
    /// `rotate-master-key --new-key-file` holds its file) on the descriptor that is then read: one
    /// its group or others may read or write (restored from a backup, copied 0644), or another
    /// account's (root's excepted), is refused before a byte of it is read. A link is followed and
    /// the file it leads to judged. One this account may not open is refused by its owner or mode
    /// (``RefusedSecretFile/init(unopenable:what:path:)``): another account's 0600 file, or this
    /// account's made 0200 under a umask, is told to chown or chmod it.
    ///
    /// - Throws: ``RefusedSecretFile`` for a file the rule refuses or this account may not open;
    ///   ``ServerSetupError`` for one that is not a regular file or cannot be read otherwise.
    static func readFile(at path: String, what: String = "the master key file") throws -> [UInt8]? {
        let bytes: [UInt8]
        do {
            // A regular file only, opened without waiting on a pipe (PositionalFile's checks).
            let file = try PositionalFile(readingAt: path)
            var info = stat()
            guard fstat(file.descriptor, &info) == 0 else { throw IOFailure(operation: .stat, path: path, errno: errno) }
            if let refused = RefusedSecretFile(info, what: what, path: path) { throw refused }
            bytes = try file.read(count: maximumFileSize + 1, at: 0)
        } catch let failure as IOFailure where failure.code == ENOENT {
            var status = stat()
            guard lstat(path, &status) != 0 || status.st_mode & S_IFMT != S_IFLNK else {
                throw ServerSetupError("\(what) \(path) is a link to a missing file: restore the file it leads to, or move the link away")
            }
            return nil
        } catch let failure as IOFailure where failure.operation == .open && (failure.code == EACCES || failure.code == EPERM) {
            // Not opened, so judged by its path: whose it is, or its mode, says what to do.
            var status = stat()
            if stat(path, &status) == 0, let refused = RefusedSecretFile(unopenable: status, what: what, path: path) { throw refused }
            throw ServerSetupError("cannot read \(what) \(path): \(failure.reason)")
        } catch let failure as IOFailure where failure.operation == .open && (failure.code == EISDIR || failure.code == EINVAL) {
            // A folder, a pipe, a device (PositionalFile's refusals): nothing a server wrote.
            throw ServerSetupError("cannot read \(what) \(path): \(failure.reason); move it away (a master key file is a regular file)")
        } catch let failure as IOFailure {
            throw ServerSetupError("cannot read \(what) \(path): \(failure.reason)")
        }
        return bytes
    }

    /// Encrypts model key material, binding it to its key ID and team so rows cannot be swapped.
    func wrap(_ material: SymmetricKey, keyID: String, teamID: UUID) throws -> Data {
        let sealed = try material.withUnsafeBytes {
            try AES.GCM.seal(Data($0), using: key, authenticating: Self.binding(keyID: keyID, teamID: teamID))
        }
        return sealed.combined!
    }

    /// Decrypts model key material wrapped by ``wrap(_:keyID:teamID:)``.
    func unwrap(_ wrapped: Data, keyID: String, teamID: UUID) throws -> SymmetricKey {
        let box = try AES.GCM.SealedBox(combined: wrapped)
        return SymmetricKey(data: try AES.GCM.open(box, using: key, authenticating: Self.binding(keyID: keyID, teamID: teamID)))
    }

    static func binding(keyID: String, teamID: UUID) -> Data {
        Data("coffer model key v1|\(keyID)|\(teamID.uuidString.lowercased())".utf8)
    }
}

/// Files that hold secrets: created exclusively with mode 0600 (whatever the umask), and durably.
enum SecretFile {
    /// Creates the file at `path` holding `contents`, mode 0600 whatever the umask, or fails when
    /// anything is there. Once it returns, the contents and the file's name survive a power cut
    /// (the database may come to rely on them: a bootstrap token, a master key); when it throws,
    /// no file it made is left.
    static func create(at path: String, contents: Data) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServerSetupError("cannot create \(path): \(String(cString: strerror(errno)))") }
        do {
            defer { close(fd) }
            // open() gives 0600 less the umask: under 0477, say, 0200, which the next start could
            // not read. Exactly 0600, whatever the umask, before a byte of the secret is written.
            guard fchmod(fd, 0o600) == 0 else {
                throw ServerSetupError("cannot make \(path) mode 0600: \(String(cString: strerror(errno)))")
            }
            try contents.withUnsafeBytes { bytes in
                guard write(fd, bytes.baseAddress, bytes.count) == bytes.count, fsync(fd) == 0 else {
                    throw ServerSetupError("cannot write \(path): \(String(cString: strerror(errno)))")
                }
            }
            try synchronizeFolder(of: path)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Flushes the folder holding `path`, so that a name just made, renamed or removed there
    /// outlives a power cut.
    static func synchronizeFolder(of path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        try DurableSync.synchronizeFolder(folder.isEmpty ? "." : folder)
    }

    /// Whether anything is at `path`, a link to nothing included (it too would make `O_EXCL` fail).
    static func entryExists(at path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}

/// A configuration problem that stops the server from starting; one line, never a secret.
struct ServerSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
