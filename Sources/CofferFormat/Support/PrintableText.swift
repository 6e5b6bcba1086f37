/// Text from outside made fit for an error message an app may log: a server's error answer, a
/// redirect's scheme, a manifest's fields — some read before any signature was checked. The one
/// filter of the package for such messages. `package` access: every module of Coffer uses it, and
/// no app that imports ``CofferFormat`` sees it.
package enum PrintableText {
    /// `text` without the scalars ``isUnprintable(_:)`` names, cut to at most `limit` scalars: it can
    /// neither start a line of its own in a log nor send a terminal escape, and it is bounded
    /// however many combining marks a character carries.
    package static func sanitized(_ text: String, limit: Int) -> String {
        String(text.unicodeScalars.filter { !isUnprintable($0) }.prefix(limit).map(Character.init))
    }

    /// Whether `scalar` is a control character (C0, DEL, C1: line breaks, terminal escapes), a
    /// format character (bidirectional overrides and isolates, zero-width characters, which can
    /// make text read otherwise than it is) or a line or paragraph separator.
    package static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
