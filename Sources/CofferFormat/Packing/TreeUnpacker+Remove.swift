#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension TreeUnpacker {
    /// Deletes the file, symlink or folder at `path` and everything inside it, as far as possible.
    ///
    /// Symlinks are removed, never followed: folders are entered through descriptors opened with
    /// `O_NOFOLLOW` and their contents removed relative to them. Folders without full owner
    /// permissions (a restored read-only folder) are made accessible first. Errors are ignored;
    /// whatever cannot be removed stays. Meant for cleaning up a destination after a failed restore.
    public static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard PackedTree.FileType(info) == .directory else {
            unlink(path)
            return
        }
        // Never through a link: the path was a folder at lstat, and NOFOLLOW keeps it that way.
        if UInt32(info.st_mode) & 0o700 != 0o700 { makeOwnerWritable(AT_FDCWD, path) }
        removeTree(path, maximumDepth: maximumOpenDepth, descending: { _ in })
    }

    /// Gives the owner all rights on the folder `name` of `descriptor`, which `fstatat` just found
    /// to be a folder, without following a symlink put in its place. glibc before 2.32 refuses
    /// `fchmodat` with `AT_SYMLINK_NOFOLLOW` on every path (`ENOTSUP`); then the folder is opened
    /// with `O_NOFOLLOW` and changed through its descriptor (a folder its owner cannot read, and
    /// so cannot open, is changed by name: it was a folder an instant ago, in a tree of ours).
    static func makeOwnerWritable(_ descriptor: Int32, _ name: UnsafePointer<CChar>, noFollowFirst: Bool = true) {
        if noFollowFirst, fchmodat(descriptor, name, 0o700, AT_SYMLINK_NOFOLLOW) == 0 { return }
        let folder = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        if folder >= 0 {
            fchmod(folder, 0o700)
            close(folder)
        } else if errno == EACCES {
            fchmodat(descriptor, name, 0o700, 0)
        }
    }

    /// The most folders ``removeTree(_:)`` keeps open at once. A packed path may nest ~2 000
    /// folders deep, and one descriptor a level ran out of descriptors (1 024 a process by default
    /// on Linux, 256 on macOS): the deep end of a failed restore, plaintext, stayed on disk.
    static let maximumOpenDepth = 64

    /// Removes the folder at `path` (entered with `O_NOFOLLOW`) and its contents, at most
    /// `maximumDepth` folders open at once; `descending` is told each new depth (for tests).
    static func removeTree(_ path: String, maximumDepth: Int, descending: (Int) -> Void) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 { removeContents(of: descriptor, maximumDepth: maximumDepth, descending: descending) }
        rmdir(path)
    }

    /// An open folder being emptied: its descriptor, its names and the next name to remove.
    private struct OpenFolder {
        let descriptor: Int32
        var names: [[CChar]]
        var next = 0
    }

    /// Removes everything inside the open folder `descriptor`, depth first without recursion, and
    /// closes the descriptor. One descriptor stays open per level of depth, up to `maximumDepth`:
    /// a folder deeper than that is first moved up into the top folder (renamed, never copied;
    /// it is being removed anyway) and emptied from there.
    private static func removeContents(of descriptor: Int32, maximumDepth: Int, descending: (Int) -> Void) {
        var stack = [OpenFolder(descriptor: descriptor, names: names(in: descriptor))]
        var moved = 0
        while let top = stack.last {
            guard top.next < top.names.count else {
                close(top.descriptor)
                stack.removeLast()
                if let parent = stack.last {
                    unlinkat(parent.descriptor, parent.names[parent.next - 1], AT_REMOVEDIR)
                }
                continue
            }
            stack[stack.count - 1].next += 1
            let name = top.names[top.next]
            var info = stat()
            guard fstatat(top.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard PackedTree.FileType(info) == .directory else {
                unlinkat(top.descriptor, name, 0)
                continue
            }
            // Writable first: moving a folder to another parent rewrites its "..", which needs it.
            if UInt32(info.st_mode) & 0o700 != 0o700 { makeOwnerWritable(top.descriptor, name) }
            if stack.count >= maximumDepth, stack.count > 1, let name = moveUp(name, from: top.descriptor, to: stack[0].descriptor, count: &moved) {
                stack[0].names.append(name)
                continue
            }
            let child = openat(top.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            if child >= 0 {
                stack.append(OpenFolder(descriptor: child, names: names(in: child)))
                descending(stack.count)
            } else {
                unlinkat(top.descriptor, name, AT_REMOVEDIR)
            }
        }
    }

    /// Renames folder `name` of `folder` into `top` under a name not taken there; the new name
    /// (NUL-terminated), or nil when it could not be moved.
    private static func moveUp(_ name: [CChar], from folder: Int32, to top: Int32, count: inout Int) -> [CChar]? {
        for _ in 0..<16 {
            count += 1
            let candidate = Array(".coffer-removing-\(count)".utf8CString)
            if renameat(folder, name, top, candidate) == 0 { return candidate }
            guard errno == EEXIST || errno == ENOTEMPTY || errno == ENOTDIR || errno == EISDIR else { return nil }
        }
        return nil
    }

    /// The NUL-terminated names in the open folder `descriptor`, other than "." and "..".
    private static func names(in descriptor: Int32) -> [[CChar]] {
        let listing = dup(descriptor)
        guard listing >= 0 else { return [] }
        guard let stream = fdopendir(listing) else {
            close(listing)
            return []
        }
        defer { closedir(stream) }
        var names: [[CChar]] = []
        while let record = readdir(stream) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { raw in
                raw.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name + [0])
        }
        return names
    }
}
