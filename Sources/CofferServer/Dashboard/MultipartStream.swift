import Vapor

/// A streaming reader of `multipart/form-data` bodies as browsers send them (RFC 7578): it splits
/// the bytes into parts, reads each part's `Content-Disposition`, and hands the parts' contents on
/// as they arrive, keeping at most one delimiter's worth of bytes (and one part's headers, at most
/// ``headerLimit``) in memory.
///
/// Written here rather than taken from MultipartKit: MultipartKit 4.7.1's parser reads a table out
/// of bounds, and crashes the process, on a header-name byte of 0x80 or more.
struct MultipartStream {
    /// What the bytes fed so far held, in order.
    enum Event: Equatable {
        /// A part starts: its field name and, for a file, its file name.
        case part(name: String, filename: String?)
        /// Bytes of the current part's content.
        case data(ByteBuffer)
        /// The current part ended.
        case end
    }

    /// Why a body is not a form.
    struct Malformed: Error, Equatable { let reason: String }

    /// The most bytes a part's header block may have.
    static let headerLimit = 8 * 1024

    private enum State { case opening, afterDelimiter, headers, content, closed }

    private let opening: [UInt8]
    private let delimiter: [UInt8]
    private var state = State.opening
    private var pending = ByteBuffer()
    /// Whether the closing delimiter (`--BOUNDARY--`) has been read.
    var isComplete: Bool { state == .closed }

    init(boundary: String) {
        opening = Array("--\(boundary)".utf8)
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Reads the next bytes; returns what they completed.
    mutating func feed(_ chunk: ByteBuffer) throws -> [Event] {
        var chunk = chunk
        pending.writeBuffer(&chunk)
        var events: [Event] = []
        while true {
            switch state {
            case .opening:
                guard pending.readableBytes >= opening.count else { return events }
                guard pending.readBytes(length: opening.count) == opening else { throw Malformed(reason: "the body does not start with its boundary") }
                state = .afterDelimiter
            case .afterDelimiter:
                guard pending.readableBytes >= 2, let two = pending.readBytes(length: 2) else { return events }
                switch two {
                case [13, 10]: state = .headers
                case [45, 45]: state = .closed
                default: throw Malformed(reason: "a boundary is followed by neither a line end nor --")
                }
            case .headers:
                guard let end = Self.find([13, 10, 13, 10], in: pending) else {
                    guard pending.readableBytes <= Self.headerLimit else { throw Malformed(reason: "a part's headers are too long") }
                    return events
                }
                guard end <= Self.headerLimit, let block = pending.readBytes(length: end) else { throw Malformed(reason: "a part's headers are too long") }
                pending.moveReaderIndex(forwardBy: 4)
                events.append(try Self.part(String(decoding: block, as: UTF8.self)))
                state = .content
            case .content:
                if let at = Self.find(delimiter, in: pending) {
                    if at > 0, let slice = pending.readSlice(length: at) { events.append(.data(slice)) }
                    pending.moveReaderIndex(forwardBy: delimiter.count)
                    events.append(.end)
                    state = .afterDelimiter
                } else {
                    // Everything but what could be the start of a delimiter is content.
                    let safe = pending.readableBytes - (delimiter.count - 1)
                    if safe > 0, let slice = pending.readSlice(length: safe) { events.append(.data(slice)) }
                    pending.discardReadBytes()
                    return events
                }
            case .closed:
                pending.moveReaderIndex(forwardBy: pending.readableBytes)  // the epilogue is ignored
                pending.discardReadBytes()
                return events
            }
        }
    }

    /// The offset of the first occurrence of `needle` in `buffer`'s readable bytes.
    static func find(_ needle: [UInt8], in buffer: ByteBuffer) -> Int? {
        buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard bytes.count >= needle.count, let first = needle.first else { return nil }
            var index = 0
            while index <= bytes.count - needle.count {
                if bytes[index] == first {
                    var matched = true
                    for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
                        matched = false
                        break
                    }
                    if matched { return index }
                }
                index += 1
            }
            return nil
        }
    }

    /// A part's header block → its field name and file name (from `Content-Disposition: form-data`).
    static func part(_ block: String) throws -> Event {
        for line in block.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":"),
                  line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition"
            else { continue }
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            guard value.lowercased().hasPrefix("form-data"), let name = parameters(value)["name"] else {
                throw Malformed(reason: "a part is not a named form field")
            }
            return .part(name: name, filename: parameters(value)["filename"])
        }
        throw Malformed(reason: "a part has no Content-Disposition")
    }

    /// `form-data; name="model"; filename="a.coffer"` → `["name": "model", "filename": "a.coffer"]`.
    static func parameters(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            var text = pair[1].trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            result[pair[0].trimmingCharacters(in: .whitespaces).lowercased()] = text
        }
        return result
    }
}
