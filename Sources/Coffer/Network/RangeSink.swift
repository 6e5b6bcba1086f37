import CofferFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One downloaded run of a delta update (``DeltaAssembly``), written at its own offsets of the
/// part file while cached runs are copied around it.
///
/// Only a `206` with exactly the bytes asked for is taken (``PieceAnswer``); each piece of the
/// body is written where it belongs and then reported to the assembly's frontier, so the hash
/// and a follower read only bytes that are on disk. Never more than the run is written.
final class RangeSink: PieceSink, @unchecked Sendable {
    private let lock = NSLock()
    private let file: PositionalFile
    private let end: UInt64
    private let frontier: DeltaAssembly.Frontier
    private var next: UInt64
    private var checked = false

    /// A sink for bytes `range` of the part `file`.
    init(_ range: Range<UInt64>, of file: PositionalFile, frontier: DeltaAssembly.Frontier) {
        self.file = file
        end = range.upperBound
        next = range.lowerBound
        self.frontier = frontier
    }

    var offset: UInt64 { lock.withLock { next } }

    var takesWholeAnswer: Bool { false }

    func beginPiece() { lock.withLock { checked = false } }

    func accept(_ data: Data, response: HTTPURLResponse, first: UInt64, last: UInt64, total: UInt64) throws {
        // The assembly stopped (a cached file could not be read): no need to finish this piece.
        guard !frontier.stopped else { throw PartWriter.Refusal(failure: .cancelled) }
        let reached = try lock.withLock { () throws -> UInt64 in
            if !checked {
                try PieceAnswer.check(response, body: data, first: first, last: last, total: total, whole: false)
                checked = true
            }
            guard UInt64(data.count) <= min(last + 1, end).subtractingSaturated(next) else {
                throw PartWriter.Refusal(failure: .server(.unreachable("the server sent more bytes than asked for")))
            }
            try data.withUnsafeBytes { try file.write($0, at: next) }
            next += UInt64(data.count)
            return next
        }
        frontier.downloaded(to: reached)
    }

    /// Every piece is written as it arrives.
    func flush() throws {}
}
