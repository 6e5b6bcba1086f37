import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the body of one Range request of a blob goes: a part file written in order
/// (``PartWriter``), or one downloaded run of a delta update written at its offset (``RangeSink``).
protocol PieceSink: AnyObject, Sendable {
    /// Where the next byte of the current answer goes.
    var offset: UInt64 { get }
    /// Whether a `200` answer (the whole blob, Range ignored) is taken: a part file starts again
    /// from byte 0; a delta's run cannot, and is refused (`range_ignored`).
    var takesWholeAnswer: Bool { get }
    /// A new request starts: its answer is checked again on its first bytes.
    func beginPiece()
    /// Takes a piece of the answer to `bytes=first-last` of a `total`-byte blob; throws
    /// ``PartWriter/Refusal`` for an answer that cannot be those bytes.
    func accept(_ data: Data, response: HTTPURLResponse, first: UInt64, last: UInt64, total: UInt64) throws
    /// Puts whatever arrived on disk (before the next try or the next run resumes from it).
    func flush() throws
}

/// The checks every answer to a blob Range request passes on its first bytes.
enum PieceAnswer {
    /// The code of the refusal of a `200` answer where only a `206` can be taken.
    static let rangeIgnored = "range_ignored"

    /// Refuses an answer to `bytes=first-last` (of `total` bytes) that is neither a `206` of
    /// exactly those bytes nor, when `whole` is taken, a `200`; `body` is the start of an error
    /// answer's body, for its message.
    static func check(_ response: HTTPURLResponse, body: Data, first: UInt64, last: UInt64, total: UInt64,
                      whole: Bool) throws(PartWriter.Refusal) {
        switch response.statusCode {
        case 206:
            guard let range = response.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init),
                  range.start == first, range.end == last, range.total == nil || range.total == total
            else { throw PartWriter.Refusal(failure: .server(.unreachable("the server did not send the bytes \(first)-\(last) asked for"))) }
        case 200 where whole:
            return
        case 200:
            throw PartWriter.Refusal(failure: ignoredRange)
        default:
            throw PartWriter.Refusal(failure: .server(DeviceAPI.failure(response, body)))
        }
    }

    /// A `200` where a delta asked for a range: the delta falls back to the whole download.
    static let ignoredRange = SyncFailure.server(.answer(status: 200, code: rangeIgnored, reason: "the server ignored the Range of a delta update"))

    /// Whether `failure` is ``ignoredRange``.
    static func isIgnoredRange(_ failure: SyncFailure) -> Bool {
        if case .server(.answer(200, rangeIgnored, _)) = failure { return true }
        return false
    }
}
