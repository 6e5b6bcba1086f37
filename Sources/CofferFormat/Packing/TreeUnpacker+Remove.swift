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
        if UInt32(info.st_mode) & 0o700 != 0o700 { fchmodat(AT_FDCWD, path, 0o700, AT_SYMLINK_NOFOLLOW) }
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 { removeContents(of: descriptor) }
        rmdir(path)
    }

    /// An open folder being emptied: its descriptor, its names and the next name to remove.
    private struct OpenFolder {
        let descriptor: Int32
        let names: [[CChar]]
        var next = 0
    }

    /// Removes everything inside the open folder `descriptor`, depth first without recursion, and
    /// closes the descriptor. One descriptor stays open per level of depth.
    private static func removeContents(of descriptor: Int32) {
        var stack = [OpenFolder(descriptor: descriptor, names: names(in: descriptor))]
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
            if UInt32(info.st_mode) & 0o700 != 0o700 { fchmodat(top.descriptor, name, 0o700, AT_SYMLINK_NOFOLLOW) }
            let child = openat(top.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            if child >= 0 {
                stack.append(OpenFolder(descriptor: child, names: names(in: child)))
            } else {
                unlinkat(top.descriptor, name, AT_REMOVEDIR)
            }
        }
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
