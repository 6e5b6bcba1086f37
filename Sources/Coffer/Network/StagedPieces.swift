import CofferFormat
#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where background downloads leave finished pieces until an update adopts them.
///
/// The system finishes a background download task whenever it likes, often while the app is
/// suspended or not running; its file must be moved before the delegate call returns. Each piece
/// is kept here as `KEY.piece` (the body) and `KEY.head` (the status and the few headers the SDK
/// reads), with `KEY.resume` holding the system's resume data of an interrupted one. `KEY` is the
/// SHA-256 of the request's URL and Range, so neither a URL nor a query string is written to disk
/// or to the system's task list. Nothing here is trusted: an adopted piece goes through the same
/// Content-Range checks and the model's SHA-256 as a foreground download, and no download may leave
/// more than its request can use (``limit(status:asked:total:waits:)``).
struct StagedPieces: Sendable {
    /// The folder (created 0700 on first use).
    let folder: URL

    /// The headers kept with a piece: what ``PartWriter``, ``BlobRedirect`` and error answers read.
    static let keptHeaders = ["Content-Range", "Content-Length", "Content-Type", "Location", "Retry-After"]

    /// The most bytes a `.head` file may have; a longer one is not a head this code wrote.
    static let headLimit = 16 << 10

    /// The name of the piece `request` asks for.
    static func key(for request: URLRequest) -> String {
        let text = (request.url?.absoluteString ?? "") + "\n" + (request.value(forHTTPHeaderField: "Range") ?? "")
        return SHA256.hash(data: Data(text.utf8)).hexString
    }

    /// The most body bytes an error or redirect answer to a piece request may leave.
    static let otherAnswerLimit: UInt64 = 1 << 20

    /// The most bytes the body of an answer with `status` to a request asking `asked`
    /// (`bytes=A-B`) may have: a `206` the bytes asked for; a `200` (a server that ignores Range)
    /// the whole blob (`total` bytes, when the asker said; else the bytes up to B), but only for a
    /// piece from byte 0 or one the SDK `waits` for (it starts the file again from such a body):
    /// every other piece of a prefetch getting the whole blob would store it once per piece, 16
    /// times for a 1 GiB model; anything else ``otherAnswerLimit``. A body over it is no piece the
    /// SDK can use, and a hostile server or mirror could fill the disk with it: the download is
    /// stopped there and its file not kept. Nil: no bound is known (a request without a Range,
    /// which the SDK does not send).
    static func limit(status: Int, asked: String?, total: UInt64?, waits: Bool = true) -> UInt64? {
        guard let asked, asked.hasPrefix("bytes=") else { return nil }
        let bounds = asked.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = UInt64(bounds[0]), let last = UInt64(bounds[1]), last >= first, last < UInt64.max else { return nil }
        switch status {
        case 206: return last - first + 1
        case 200: return first == 0 || waits ? total ?? last + 1 : otherAnswerLimit
        default: return otherAnswerLimit
        }
    }

    /// What a download task carries in its `taskDescription`, which the system keeps across
    /// launches: the piece's key, when known the blob's size, and `prefetched` for a piece asked
    /// ahead of need (for ``limit(status:asked:total:waits:)``).
    static func describe(key: String, total: UInt64?, prefetched: Bool = false) -> String {
        let described = total.map { key + " " + String($0) } ?? key
        return prefetched && total != nil ? described + " prefetched" : described
    }

    /// The key, blob size and whether it was prefetched, of a ``describe(key:total:prefetched:)`` text.
    static func described(_ text: String?) -> (key: String, total: UInt64?, prefetched: Bool)? {
        guard let parts = text?.split(separator: " ", omittingEmptySubsequences: false), (1...3).contains(parts.count) else { return nil }
        let total = parts.count >= 2 ? UInt64(parts[1]) : nil
        guard parts.count == 1 || total != nil, parts.count < 3 || parts[2] == "prefetched" else { return nil }
        return (String(parts[0]), total, parts.count == 3)
    }

    /// Whether `text` can be a key (and so a file name): 64 lowercase hex digits.
    static func isKey(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    private struct Head: Codable {
        let status: Int
        let headers: [String: String]
    }

    private func path(_ key: String, _ suffix: String) -> URL { folder.appendingPathComponent(key + "." + suffix) }

    /// Moves a finished download (`location`, the system's temporary file) in as `key`'s piece.
    /// `asked` is the Range the task's first request asked for: a task resumed from resume data
    /// reports the answer to its last request, which covers only the tail (see
    /// ``resumedContentRange(asked:contentRange:fileSize:)``).
    /// A body over `limit` bytes is removed, not kept (``limit(status:asked:total:waits:)``).
    func store(_ location: URL, response: HTTPURLResponse, key: String, asked: String? = nil, limit: UInt64? = nil) throws {
        guard Self.isKey(key) else { throw CocoaError(.fileWriteInvalidFileName) }
        if let limit, let size = (try? FileManager.default.attributesOfItem(atPath: location.path))?[.size] as? NSNumber,
           size.uint64Value > limit {
            try? FileManager.default.removeItem(at: location)
            throw URLError(.dataLengthExceedsMaximum)
        }
        // Pieces often finish while the device is locked (see ``StoragePlacement/makeSealedFolder(_:)``).
        try StoragePlacement.makeSealedFolder(folder.path)
        var headers: [String: String] = [:]
        for name in Self.keptHeaders { headers[name] = response.value(forHTTPHeaderField: name) }
        if response.statusCode == 206, let asked, let contentRange = headers["Content-Range"],
           let size = (try? FileManager.default.attributesOfItem(atPath: location.path))?[.size] as? NSNumber,
           let whole = Self.resumedContentRange(asked: asked, contentRange: contentRange, fileSize: size.uint64Value) {
            headers["Content-Range"] = whole
        }
        let head = try JSONEncoder().encode(Head(status: response.statusCode, headers: headers))
        let body = path(key, "piece")
        try? FileManager.default.removeItem(at: body)
        try FileManager.default.moveItem(at: location, to: body)
        // The head is written last: a piece without one is not adopted (a crash between the two).
        try AtomicOutput.write(head, to: path(key, "head").path, replacing: true)
    }

    /// The Content-Range of the whole piece a resumed download assembled: when the answer covers a
    /// tail of the `asked` range (`bytes=A-B`) that ends at B, and the file holds exactly B-A+1
    /// bytes, the file is the whole range. Nil otherwise (the answer is kept as it came, and
    /// checked as always). Nothing is trusted by this: the model's SHA-256 still decides.
    static func resumedContentRange(asked: String, contentRange: String, fileSize: UInt64) -> String? {
        guard asked.hasPrefix("bytes="), let range = ContentRange(contentRange) else { return nil }
        let bounds = asked.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = UInt64(bounds[0]), let last = UInt64(bounds[1]), last >= first,
              range.end == last, range.start > first, last - first < UInt64.max, fileSize == last - first + 1
        else { return nil }
        return "bytes \(first)-\(last)/" + (range.total.map(String.init) ?? "*")
    }

    /// Keeps an answer whose body the system did not hand over as a file (a redirect or an error
    /// answer without one) as `key`'s piece with an empty body.
    func storeWithoutBody(_ response: HTTPURLResponse, key: String) throws {
        guard Self.isKey(key) else { throw CocoaError(.fileWriteInvalidFileName) }
        try StoragePlacement.makeSealedFolder(folder.path)
        let empty = folder.appendingPathComponent(key + ".empty")
        try AtomicOutput.write(Data(), to: empty.path, replacing: true)
        try store(empty, response: response, key: key)
    }

    /// `key`'s finished piece, if there is a complete one: its answer and the file of its body.
    /// The caller removes it with ``discard(_:)`` once read.
    func piece(_ key: String) -> (response: HTTPURLResponse, body: URL)? {
        guard Self.isKey(key),
              let bytes = PositionalFile.contents(at: path(key, "head").path, atMost: Self.headLimit),
              let head = try? JSONDecoder().decode(Head.self, from: bytes),
              (100...599).contains(head.status),
              FileManager.default.fileExists(atPath: path(key, "piece").path),
              let url = URL(string: "https://piece.invalid/"),
              let response = HTTPURLResponse(url: url, statusCode: head.status, httpVersion: "HTTP/1.1", headerFields: head.headers)
        else { return nil }
        return (response, path(key, "piece"))
    }

    /// Removes `key`'s piece and resume data.
    func discard(_ key: String) {
        for suffix in ["head", "piece", "resume"] { try? FileManager.default.removeItem(at: path(key, suffix)) }
    }

    /// Keeps the system's resume data of `key`'s interrupted download.
    func storeResumeData(_ data: Data, key: String) {
        guard Self.isKey(key), (try? StoragePlacement.makeSealedFolder(folder.path)) != nil else { return }
        try? AtomicOutput.write(data, to: path(key, "resume").path, replacing: true)
    }

    /// Takes `key`'s resume data, if any (it is used once).
    func takeResumeData(_ key: String) -> Data? {
        guard Self.isKey(key) else { return nil }
        let url = path(key, "resume")
        defer { try? FileManager.default.removeItem(at: url) }
        return try? Data(contentsOf: url)
    }

    /// Removes pieces nobody adopted for `age` seconds (a model the server stopped naming).
    func sweep(olderThan age: TimeInterval, now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names {
            let url = folder.appendingPathComponent(name)
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date,
                  now.timeIntervalSince(modified) > age else { continue }
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// Hands the body of a piece to `consume` in 1 MiB reads.
    static func feed(_ body: URL, response: HTTPURLResponse, to consume: (HTTPURLResponse, Data) throws -> Void) throws {
        let file = try PositionalFile(readingAt: body.path)
        let size = try file.size()
        var offset: UInt64 = 0
        while offset < size {
            let count = Int(min(1 << 20, size - offset))
            try consume(response, Data(try file.read(count: count, at: offset)))
            offset += UInt64(count)
        }
    }
}
