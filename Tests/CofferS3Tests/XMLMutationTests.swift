import BlockingTestSupport
import Testing
@testable import CofferS3

/// The answer readers under mutation: random byte flips, truncations, insertions, deletions and
/// duplicated runs over real answers. Every mutant must be answered with a value or an error, never
/// a trap (a trap here would be a crash of the server on a store's or a proxy's bad answer).
@Suite(.ownThread) struct XMLMutationTests {

    static let interesting: [[UInt8]] = ["<", ">", "/", "&", ";", "&#", "&#x", "<![CDATA[", "]]>", "<!--", "-->", "<?", "?>", "\"", "'", "<!DOCTYPE",
                                          "99999999999999999999", "-1", "true", "\u{0}", "\u{FFFF}"].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xED, 0xA0, 0x80]]

    static func mutate(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1: bytes = Array(bytes.prefix(position))
            case 2: bytes.insert(contentsOf: interesting.randomElement(using: &random)!, at: position)
            case 3 where !bytes.isEmpty: bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...16, using: &random)))
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...64, using: &random))
                bytes.insert(contentsOf: bytes[position..<end], at: end)
            default: if !bytes.isEmpty { bytes[position] = UInt8.random(in: 0...255, using: &random) }
            }
        }
        return bytes
    }

    @Test func mutatedAnswersAreRefusedOrReadNeverTrapped() {
        var random = SplitMix64(state: 0xC0FF_EE20)
        var read = 0, refused = 0
        let samples = ResponseSamples.all.map { Array($0.utf8) }
        for iteration in 0..<5000 {
            let mutant = Self.mutate(samples[iteration % samples.count], using: &random)
            // Each reader (each runs XMLReader first) is handed every mutant; the outcomes are counted.
            for outcome in [
                (try? InitiateMultipartUploadResult(mutant)) != nil,
                (try? ListMultipartUploadsResult(mutant)) != nil,
                (try? ListBucketResult(mutant)) != nil,
                (try? CompleteMultipartUploadResult(mutant)) != nil,
                (try? ListPartsResult(mutant)) != nil,
                S3ErrorBody(mutant) != nil,
            ] {
                if outcome { read += 1 } else { refused += 1 }
            }
        }
        // Both outcomes must occur: mutants that stay well formed are read, broken ones refused.
        #expect(read > 300)
        #expect(refused > 1000)
    }
}
