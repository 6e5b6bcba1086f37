import CofferFormat
import Foundation

/// Path conventions shared by the commands.
enum CLIPaths {
    /// The plaintext size of a file, or the sum of a folder's file sizes (for the progress bar).
    static func plaintextSize(of path: String) throws -> UInt64 {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw IOFailure(operation: .open, path: path, errno: ENOENT)
        }
        if isFolder.boolValue { return 0 }
        return try PositionalFile(readingAt: path).size()
    }

    /// The default output of `decrypt`/`migrate`: PATH without a known extension, else PATH plus `suffix`.
    static func strippingExtension(_ path: String, known: [String], otherwise suffix: String) -> String {
        for ext in known where path.hasSuffix(ext) && path.count > ext.count {
            return String(path.dropLast(ext.count))
        }
        return path + suffix
    }
}
