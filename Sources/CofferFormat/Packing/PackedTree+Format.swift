// The rules of the packed tree format v1, shared by the packer (`PackedTree`) and the unpacker
// (`TreeUnpacker`) so both agree byte for byte on what a valid stream is.

extension PackedTree {
    /// Constants of the packed tree format v1 (all integers big-endian).
    package enum Format {
        /// "COFTREE" followed by the format version 1.
        package static let magic: [UInt8] = [0x43, 0x4F, 0x46, 0x54, 0x52, 0x45, 0x45, 0x01]
        /// Magic, entry count (UInt32) and root mode (UInt16).
        package static let headerSize = 8 + 4 + 2
        /// Kind (UInt8), mode (UInt16) and path length (UInt16).
        package static let entryHeadSize = 1 + 2 + 2
        /// The smallest possible entry: a directory with a one-byte path.
        package static let smallestEntrySize: UInt64 = 6
        /// The most entries a stream may hold.
        package static let maxEntries = 1_000_000
        /// The longest path, and the longest symlink target, in bytes.
        package static let maxPathLength = 4096
        /// The permission bits that are stored; setuid, setgid and sticky never are.
        package static let permissionMask: UInt16 = 0o777
        /// The mode stored for every symlink.
        package static let symlinkMode: UInt16 = 0o777

        package static let kindDirectory: UInt8 = 1
        package static let kindFile: UInt8 = 2
        package static let kindSymlink: UInt8 = 3
    }

    /// True when path `a` sorts strictly before path `b` in a packed stream.
    ///
    /// Paths are compared component by component, each component by its UTF-8 bytes; a path that is
    /// a component-wise prefix of another comes first. As components never contain "/", this is a
    /// byte-wise comparison in which "/" ranks below every other byte.
    package static func compare(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case let (x?, y?):
                if x == y { continue }
                if x == UInt8(ascii: "/") { return true }
                if y == UInt8(ascii: "/") { return false }
                return x < y
            }
        }
    }

    /// The bytes as a string when they are valid UTF-8, otherwise nil.
    package static func decodeUTF8<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        let text = String(decoding: bytes, as: UTF8.self)
        // Invalid sequences are replaced by U+FFFD, so the round trip differs exactly when invalid.
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// Why `path` may not name an entry, or nil when it may.
    ///
    /// A valid path is 1...4096 bytes of UTF-8, relative, made of non-empty components other than
    /// "." and "..", without NUL bytes.
    package static func pathProblem(_ path: String) -> String? {
        let bytes = path.utf8
        if bytes.isEmpty { return "an entry has an empty path" }
        if bytes.count > Format.maxPathLength { return "path longer than \(Format.maxPathLength) bytes" }
        if bytes.contains(0) { return "path contains a NUL byte" }
        if bytes.first == UInt8(ascii: "/") { return "absolute path" }
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty { return "path has an empty component" }
            if component.elementsEqual(".".utf8) { return "path has a \".\" component" }
            if component.elementsEqual("..".utf8) { return "path has a \"..\" component" }
        }
        return nil
    }

    /// Why `target` may not be the target of a symlink at `linkPath`, or nil when it may.
    ///
    /// A valid target is 1...4096 bytes, relative, without NUL bytes; ".." components may only form a
    /// leading run, and there may be no more of them than the folders above the link, so resolving
    /// the target lexically from the link's folder stays within the root.
    package static func targetProblem(_ target: String, linkPath: String) -> String? {
        let bytes = target.utf8
        if bytes.isEmpty { return "empty symlink target" }
        if bytes.count > Format.maxPathLength { return "symlink target longer than \(Format.maxPathLength) bytes" }
        if bytes.contains(0) { return "symlink target contains a NUL byte" }
        if bytes.first == UInt8(ascii: "/") { return "symlink target is absolute" }
        var ups = 0
        var leading = true
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.elementsEqual("..".utf8) {
                guard leading else { return "symlink target has \"..\" after another component" }
                ups += 1
            } else {
                leading = false
            }
        }
        let depth = linkPath.utf8.reduce(0) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 }
        if ups > depth { return "symlink target leads outside the packed folder" }
        return nil
    }
}
