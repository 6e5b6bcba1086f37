import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A decrypted model at a path, for runtimes that open paths, kept off persistent storage where
/// the platform allows it, and removed by ``remove()``.
///
/// - Linux, a file: an anonymous memory file (`memfd_create`), reached as `/proc/self/fd/N` —
///   it has no name on any disk and disappears when closed.
/// - Linux, a folder: unpacked into a private (0700) folder in `/dev/shm`, the RAM file system;
///   refused when there is none.
/// - Apple platforms: there is no memory-only file; the model goes to a private folder in the
///   app's temporary directory, protected "complete unless open" on iOS, tvOS, watchOS and
///   visionOS (it can be created while the device is locked, and a model a runtime has open —
///   memory-mapped Core ML weights — stays readable after the device locks; `.complete` would
///   fail both), and is removed by ``remove()``. A crash before that leaves it for the system's
///   temporary-file cleanup.
final class DecryptedFile: @unchecked Sendable {
    /// Where the decrypted model is.
    let url: URL
    private let descriptor: Int32?
    private let folder: String?

    /// Decrypts `reader`'s model. Throws what decrypting throws, unwrapped (``ContainerError``,
    /// ``IOFailure``…), so that the entry's check can tell a damaged file from a failed model.
    init(_ reader: SealedModel.Reader) throws {
        switch reader.header.payloadKind {
        case .file:
            #if os(Linux) || os(Android)
            let fd = try Self.memoryFile()
            let file = PositionalFile(adopting: dup(fd), path: "memfd")
            do {
                try reader.decrypt(to: file)
            } catch {
                close(fd)
                throw error
            }
            descriptor = fd
            folder = nil
            url = URL(fileURLWithPath: "/proc/self/fd/\(fd)")
            #else
            let folder = try Self.privateFolder()
            let path = folder + "/" + Self.safeName(reader.header.originalName)
            do {
                let fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
                try reader.decrypt(to: PositionalFile(adopting: fd, path: path))
            } catch {
                TreeUnpacker.removeTree(folder)
                throw error
            }
            descriptor = nil
            self.folder = folder
            url = URL(fileURLWithPath: path)
            #endif
        case .directory:
            let folder = try Self.privateFolder()
            let path = folder + "/" + Self.safeName(reader.header.originalName)
            do {
                let unpacker = try TreeUnpacker(destination: path, expectedLength: reader.plaintextLength)
                try reader.decryptInOrder { plaintext in try plaintext.withUnsafeBytes { try unpacker.consume($0) } }
                try unpacker.finish()
            } catch {
                TreeUnpacker.removeTree(folder)
                throw error
            }
            descriptor = nil
            self.folder = folder
            url = URL(fileURLWithPath: path, isDirectory: true)
        }
    }

    /// Closes the memory file or removes the private folder.
    func remove() {
        if let descriptor { close(descriptor) }
        if let folder { TreeUnpacker.removeTree(folder) }
    }

    #if os(Linux) || os(Android)
    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    private static let memfdCreate: MemfdCreate? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "memfd_create") else { return nil }
        return unsafeBitCast(symbol, to: MemfdCreate.self)
    }()

    private static func memoryFile() throws -> Int32 {
        guard let memfdCreate else { throw CofferError.invalidConfiguration("this system has no memfd_create") }
        let fd = memfdCreate("coffer-model", 1 /* MFD_CLOEXEC */)
        guard fd >= 0 else { throw IOFailure(operation: .create, path: "memfd", errno: errno) }
        return fd
    }

    private static let ramFolder = "/dev/shm"

    /// Whether `path` is a tmpfs mount point, from /proc/self/mounts (Glibc's module has no statfs).
    private static func isRAMFileSystem(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        return mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count >= 3 && fields[1] == path && fields[2] == "tmpfs"
        }
    }
    #endif

    /// A new 0700 folder: in /dev/shm on Linux (refused when it is not a RAM file system), in the
    /// temporary directory on Apple platforms.
    private static func privateFolder() throws -> String {
        let suffix = SymmetricKey(size: .bits128).withUnsafeBytes { $0.hexString }
        #if os(Linux) || os(Android)
        guard isRAMFileSystem(ramFolder) else {
            throw CofferError.invalidConfiguration("a folder model needs the RAM file system /dev/shm to be opened as files")
        }
        let path = ramFolder + "/coffer-" + suffix
        #else
        let path = NSTemporaryDirectory() + "coffer-" + suffix
        #endif
        guard mkdir(path, 0o700) == 0 else { throw IOFailure(operation: .create, path: path, errno: errno) }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUnlessOpen], ofItemAtPath: path)
        #endif
        return path
    }

    /// The model's recorded name as one path component.
    private static func safeName(_ name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? ""
        return last.isEmpty || last == "." || last == ".." ? "model" : last
    }
}
