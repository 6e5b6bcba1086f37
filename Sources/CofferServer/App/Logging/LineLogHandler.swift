import Foundation
import Logging
import NIOConcurrencyHelpers

/// A swift-log handler that writes each event as one line on standard error: `TIME LEVEL MESSAGE
/// key=value…` (``LogFormat/text``) or one JSON object (``LogFormat/json``).
///
/// Only what the code logged goes out: the time, level, logger label (JSON), message and metadata.
/// Nothing here adds request data; keeping secrets out of messages is each call site's duty
/// (tokens, keys and credentials are never logged, only where they are).
struct LineLogHandler: LogHandler {
    let label: String
    let format: LogFormat
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, format: LogFormat, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level, message = event.message
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        let time = Self.timestamp()
        let text: String
        switch format {
        case .text: text = Self.textLine(time: time, level: level, message: "\(message)", metadata: all)
        case .json: text = Self.jsonLine(time: time, level: level, label: label, message: "\(message)", metadata: all)
        }
        Self.output.write(text)
    }

    /// `2026-11-24T16:40:00.123Z notice message key=value`.
    static func textLine(time: String, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = time + " " + level.rawValue + " " + oneLine(message)
        for key in metadata.keys.sorted() { line += " \(oneLine(key))=\(oneLine("\(metadata[key]!)"))" }
        return line + "\n"
    }

    /// `text` with line breaks written as `\n` and `\r`: a value that came from outside (a name, a
    /// path) cannot start a line that looks like another event.
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.isWhitespace && $0.value != 0x20 && $0.value != 0x09 }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x0B, 0x0C, 0x85, 0x2028, 0x2029: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `{"time":"…","level":"notice","label":"…","message":"…","metadata":{…}}`: one line (newlines
    /// in the message are escaped).
    static func jsonLine(time: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var line = "{\"time\":" + JSONText.string(time) + ",\"level\":" + JSONText.string(level.rawValue)
            + ",\"label\":" + JSONText.string(label) + ",\"message\":" + JSONText.string(message)
        if !metadata.isEmpty { line += ",\"metadata\":" + JSONText.object(metadata) }
        return line + "}\n"
    }

    /// UTC with milliseconds, e.g. `2026-11-24T16:40:00.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(now.tv_nsec) / 1_000_000
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }

    /// Standard error, one `write` per line under a lock, so lines from several threads never mix.
    static let output = LineOutput()

    final class LineOutput: Sendable {
        private let lock = NIOLock()
        func write(_ line: String) {
            lock.withLock { FileHandle.standardError.write(Data(line.utf8)) }
        }
    }
}

/// JSON text for log lines: strings escaped as RFC 8259 requires, metadata as objects and arrays.
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func object(_ metadata: Logger.Metadata) -> String {
        "{" + metadata.keys.sorted().map { string($0) + ":" + value(metadata[$0]!) }.joined(separator: ",") + "}"
    }

    static func value(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return string(text)
        case .stringConvertible(let convertible): return string(convertible.description)
        case .array(let values): return "[" + values.map(Self.value).joined(separator: ",") + "]"
        case .dictionary(let metadata): return object(metadata)
        }
    }
}
