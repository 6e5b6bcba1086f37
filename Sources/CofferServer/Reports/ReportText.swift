import Foundation

/// A string field of a report event as sent, checked as UTF-8 and not yet made a `String`: where
/// its bytes are in ``ReportBatch/bytes`` — between its quotes in the body when it has no escape
/// (the usual case: nothing copied), else its unescaped bytes, kept after the body. A batch has 180
/// string fields; only the ones a report keeps become Strings (the device ID, the collection and
/// the model, once per batch when they repeat; a failure's event ID and reason), the others (the
/// event ID's key, the time, the deployment ID, the SHA-256, the outcome) are read from the bytes.
///
/// A range and nothing else: an event's ten fields hold no reference, so reading, copying and
/// freeing a batch's events retains and releases nothing (a reference to the body per field was a
/// tenth of the report route's time).
struct ReportText: Sendable {
    /// Where the text's bytes are in the batch's bytes.
    let range: Range<Int>

    /// How many bytes it has.
    var count: Int { range.count }

    /// The text, from `bytes` (the batch's).
    func string(in bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: self.bytes(in: bytes), as: UTF8.self)
    }

    /// The text, as `previous` when that is the same text (no String made), else made and kept
    /// in `previous`.
    func string(in bytes: UnsafeBufferPointer<UInt8>, reusing previous: inout String?) -> String {
        let mine = self.bytes(in: bytes)
        if var known = previous, known.utf8.count == mine.count, known.withUTF8({ given in
            given.isEmpty || memcmp(given.baseAddress!, mine.baseAddress!, given.count) == 0
        }) {
            return known
        }
        let made = String(decoding: mine, as: UTF8.self)
        previous = made
        return made
    }

    /// The text's bytes in `bytes` (the batch's).
    func bytes(in bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[range])
    }

    /// Whether every byte of the text in `bytes` passes `test`.
    func allBytes(in bytes: UnsafeBufferPointer<UInt8>, _ test: (UInt8) -> Bool) -> Bool {
        self.bytes(in: bytes).allSatisfy(test)
    }
}
