import Foundation

/// A string field of a report event as sent, checked as UTF-8 and not yet made a `String`: the
/// bytes between its quotes in the body when it has no escape (the usual case: nothing copied), else
/// its unescaped bytes. A batch has 180 string fields; only the ones a report keeps become Strings
/// (``string``: the device ID, the collection and the model, once per batch when they repeat; a
/// failure's event ID and reason), the others (the event ID's key, the time, the deployment ID, the
/// SHA-256, the outcome) are read from the bytes.
struct ReportText: Sendable {
    private let storage: [UInt8]
    private let range: Range<Int>

    /// `range` of `storage`, which the reader has checked is UTF-8.
    init(_ storage: [UInt8], _ range: Range<Int>) {
        self.storage = storage
        self.range = range
    }

    /// The text.
    var string: String { String(decoding: storage[range], as: UTF8.self) }

    /// The text, as `previous` when that is the same text (no String made), else made and kept
    /// in `previous`.
    func string(reusing previous: inout String?) -> String {
        if var known = previous, known.utf8.count == range.count, known.withUTF8({ given in
            withBytes { given.isEmpty || memcmp(given.baseAddress!, $0.baseAddress!, given.count) == 0 }
        }) {
            return known
        }
        let made = string
        previous = made
        return made
    }

    /// The text's bytes.
    var bytes: ArraySlice<UInt8> { storage[range] }

    /// How many bytes it has.
    var count: Int { range.count }

    /// `body` over the text's bytes, in place.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        storage.withUnsafeBufferPointer { all in body(UnsafeBufferPointer(rebasing: all[range])) }
    }

    /// Whether every byte passes `test`.
    func allBytes(_ test: (UInt8) -> Bool) -> Bool {
        storage[range].allSatisfy(test)
    }
}
