import CofferFormat
import Foundation

/// Path conventions shared by the commands.
enum CLIPaths {
    /// The default output of `decrypt`/`migrate`: PATH without a known extension, else PATH plus `suffix`.
    static func strippingExtension(_ path: String, known: [String], otherwise suffix: String) -> String {
        for ext in known where path.hasSuffix(ext) && path.count > ext.count {
            return String(path.dropLast(ext.count))
        }
        return path + suffix
    }
}
