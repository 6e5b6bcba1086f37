#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's file mode creation mask (umask), read without changing it where the system allows.
///
/// `umask(2)` only reads the mask by setting another: between `umask(0)` and putting the old mask
/// back, a file another thread of the process creates gets no mask at all (a library inside an app
/// cannot know no such thread exists). Linux reports the mask in `/proc/self/status` (since 4.7),
/// which is read instead; elsewhere, and when that line is missing, the set-and-restore is the
/// only way and is used.
package enum FileCreationMask {
    /// The current mask's permission bits (`0o022` for the usual `umask 022`).
    package static var current: mode_t {
        #if os(Linux)
        if let mask = fromProcStatus() { return mask }
        #endif
        let mask = umask(0)
        umask(mask)
        return mask & 0o777
    }

    #if os(Linux)
    /// The `Umask:` line of `/proc/self/status` (octal), or nil when it cannot be read.
    static func fromProcStatus() -> mode_t? {
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // The line is near the top (after Name); 4 KiB holds it with room to spare.
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return parse(buffer[..<count])
    }
    #endif

    /// The mask in a `/proc/PID/status` text: the octal digits after `Umask:` and blanks, or nil.
    static func parse(_ status: ArraySlice<UInt8>) -> mode_t? {
        let label = Array("\nUmask:".utf8)
        var index = status.startIndex
        while index + label.count <= status.endIndex {
            if status[index..<index + label.count].elementsEqual(label) { break }
            index += 1
        }
        guard index + label.count <= status.endIndex else { return nil }
        var cursor = index + label.count
        while cursor < status.endIndex, status[cursor] == UInt8(ascii: "\t") || status[cursor] == UInt8(ascii: " ") { cursor += 1 }
        var value: mode_t = 0
        var digits = 0
        while cursor < status.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(status[cursor]), digits < 6 {
            value = value << 3 | mode_t(status[cursor] - UInt8(ascii: "0"))
            digits += 1
            cursor += 1
        }
        guard digits > 0 else { return nil }
        return value & 0o777
    }
}
