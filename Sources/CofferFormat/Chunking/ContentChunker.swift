#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif

/// Cuts plaintext into content-defined chunks for format version 2 (docs/FORMAT.md, "Cutting the
/// plaintext").
///
/// A gear rolling hash over the last 64 bytes decides where a chunk ends, so an insertion or a
/// change moves only the boundaries near it: two versions of a model agree on every chunk outside
/// the changed stretches, and those chunks seal to the same bytes. Cutting is normalized (a
/// stricter test before the average size, a looser one after) so chunk sizes cluster around the
/// average. Readers never cut; only writers that want to share chunks must cut alike.
public enum ContentChunker {
    /// No chunk is shorter, except the last of a segment (64 KiB).
    public static let minimumLength = 1 << 16
    /// The size chunks cluster around (256 KiB; docs/adr/0003-delta-format.md).
    public static let averageLength = 1 << 18
    /// No chunk is longer (1 MiB).
    public static let maximumLength = 1 << 20

    /// Before the average length a boundary needs the hash's 20 high bits zero, after it 16.
    static let strictShift: UInt64 = 64 - 20
    static let looseShift: UInt64 = 64 - 16

    /// The gear table of a container's input key material: `gear[b]` = the first 8 bytes,
    /// big-endian, of HMAC-SHA-256(gear key, b), the gear key derived with HKDF-SHA-256 (empty
    /// salt, info "coffer v2 chunk gear"). Keyed, so that nobody without the key can cut a guessed
    /// plaintext and compare its chunk lengths with a container's; under one key the cut is the
    /// same in every version, as delta updates need.
    static func gear(inputKeyMaterial: SymmetricKey) -> [UInt64] {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: gearInfo, outputByteCount: 32)
        return (0...255).map { value in
            HMAC<SHA256>.authenticationCode(for: [UInt8(value)], using: key).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
    }

    static let gearInfo = Array("coffer v2 chunk gear".utf8)

    /// The chunk lengths of `source` cut with `gear` (``gear(inputKeyMaterial:)``), in order, with a boundary at each of `segmentStarts` too
    /// (for a packed folder: the start of every entry). An empty source is one empty chunk.
    ///
    /// Reads the source once, in order, through a buffer of a few MiB, on the calling thread
    /// (``lengths(of:segmentStarts:gear:threads:minimumStretch:)`` gives the same cut on several).
    static func lengths(of source: some PlaintextSource, segmentStarts: [UInt64] = [], gear: [UInt64]) throws -> [UInt32] {
        let total = source.length
        guard total > 0 else { return [0] }
        let whole = try chain(of: source, from: 0, until: total, segments: Segments(starts: segmentStarts, total: total), gear: gear)
        return lengths(of: whole.starts, total: total)
    }

    /// The length of the chunk that starts at `start` in a segment ending before `end`.
    static func cut(from start: UInt64, before end: UInt64, in window: inout Window<some PlaintextSource>, gear: [UInt64]) throws -> Int {
        let remaining = end - start
        guard remaining > UInt64(minimumLength) else { return Int(remaining) }
        let limit = Int(min(UInt64(maximumLength), remaining))
        let bytes = try window.bytes(at: start, count: limit)
        return gear.withUnsafeBufferPointer { gear in
            var hash: UInt64 = 0
            let normal = min(averageLength, limit)
            if let cut = scan(bytes, gear, from: minimumLength, to: normal, shift: strictShift, hash: &hash) { return cut }
            return scan(bytes, gear, from: normal, to: limit, shift: looseShift, hash: &hash) ?? limit
        }
    }

    /// Rolls the hash over `bytes[from..<to]`; the end of the first byte after which the hash's
    /// high `64 − shift` bits are zero, or nil.
    ///
    /// Four bytes a step. The arithmetic is modulo 2^64, so after bytes with gear values g₁…g₄
    /// the hash is hₖ = (h << k) + pₖ with p₁ = g₁ and pₖ = (pₖ₋₁ << 1) + gₖ: the same values as
    /// four single steps. The p's do not depend on h, so the chain that carries the hash from one
    /// step to the next is one shift and one add per four bytes, and the four tests are
    /// independent of each other (a byte-at-a-time loop waits on a shift and an add per byte).
    @inline(__always)
    static func scan(_ bytes: UnsafeRawBufferPointer, _ gear: UnsafeBufferPointer<UInt64>, from: Int, to end: Int,
                     shift: UInt64, hash: inout UInt64) -> Int? {
        var index = from
        while index + 3 < end {
            let p1 = gear[Int(bytes[index])]
            let p2 = (p1 &<< 1) &+ gear[Int(bytes[index + 1])]
            let p3 = (p2 &<< 1) &+ gear[Int(bytes[index + 2])]
            let p4 = (p3 &<< 1) &+ gear[Int(bytes[index + 3])]
            let h1 = (hash &<< 1) &+ p1, h2 = (hash &<< 2) &+ p2, h3 = (hash &<< 3) &+ p3
            hash = (hash &<< 4) &+ p4
            if h1 >> shift == 0 { return index + 1 }
            if h2 >> shift == 0 { return index + 2 }
            if h3 >> shift == 0 { return index + 3 }
            if hash >> shift == 0 { return index + 4 }
            index += 4
        }
        while index < end {
            hash = (hash &<< 1) &+ gear[Int(bytes[index])]
            index += 1
            if hash >> shift == 0 { return index }
        }
        return nil
    }

    /// A sliding view of the source: the bytes from some offset on, refilled in large reads.
    struct Window<Source: PlaintextSource> {
        let source: Source
        private let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * ContentChunker.maximumLength, alignment: 64)
        /// The source offset of `storage[0]`, and how many bytes are valid.
        private var origin: UInt64 = 0
        private var valid = 0

        init(source: Source) { self.source = source }

        func release() { storage.deallocate() }

        /// `count` (at most ``ContentChunker/maximumLength``) bytes from `offset`, which never goes back.
        mutating func bytes(at offset: UInt64, count: Int) throws -> UnsafeRawBufferPointer {
            if offset < origin || offset + UInt64(count) > origin + UInt64(valid) {
                let keep = offset >= origin && offset < origin + UInt64(valid) ? valid - Int(offset - origin) : 0
                if keep > 0 {
                    let from = UnsafeRawBufferPointer(rebasing: storage[(valid - keep)..<valid])
                    UnsafeMutableRawBufferPointer(rebasing: storage[0..<keep]).copyMemory(from: from)
                }
                let fill = Int(min(UInt64(storage.count - keep), source.length - offset - UInt64(keep)))
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[keep..<keep + fill]), at: offset + UInt64(keep))
                origin = offset
                valid = keep + fill
            }
            let from = Int(offset - origin)
            return UnsafeRawBufferPointer(rebasing: storage[from..<from + count])
        }
    }
}
