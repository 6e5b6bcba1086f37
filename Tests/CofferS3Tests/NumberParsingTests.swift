import Foundation
import Testing
@testable import CofferS3

/// Numbers and times from the store's answers: extremes are refused, never wrapped or trapped on.
@Suite struct NumberParsingTests {
    @Test func decimalsRefuseSignsSpacesAndOverflow() {
        #expect(DecimalText.int64("0") == 0)
        #expect(DecimalText.int64("9223372036854775807") == Int64.max)
        #expect(DecimalText.int64("9223372036854775808") == nil)
        #expect(DecimalText.int64("99999999999999999999999") == nil)
        for text in ["", "-1", "+1", " 1", "1 ", "1e3", "0x10", "١"] {
            #expect(DecimalText.int64(text) == nil, "\(text)")
        }
    }

    @Test func contentRangesAreCheckedAtTheEdges() {
        #expect(S3ContentRange(header: "bytes 0-9/100") == S3ContentRange(range: 0..<10, size: 100))
        #expect(S3ContentRange(header: "bytes 90-99/*") == S3ContentRange(range: 90..<100, size: nil))
        #expect(S3ContentRange(header: "bytes */100") == S3ContentRange(range: nil, size: 100))
        #expect(S3ContentRange(header: "bytes 0-9223372036854775806/9223372036854775807") == S3ContentRange(range: 0..<Int64.max, size: Int64.max))
        for header in ["bytes 0-9223372036854775807/9223372036854775807", "bytes 0-9223372036854775807/*", "bytes 0-99999999999999999999/*",
                       "bytes 9-0/100", "bytes 0-100/100", "bytes */*", "bytes 0-9", "bytes=0-9/10", "bytes -1-9/10", "bytes 0--9/10", "items 0-9/10", ""] {
            #expect(S3ContentRange(header: header) == nil, "\(header)")
        }
    }

    @Test func rangeHeadersAreRefusedWhenEmptyOrNegative() throws {
        #expect(try S3ByteRange.bytes(0..<10).headerValue() == "bytes=0-9")
        #expect(try S3ByteRange.bytes(5..<Int64.max).headerValue() == "bytes=5-9223372036854775806")
        #expect(try S3ByteRange.from(7).headerValue() == "bytes=7-")
        #expect(try S3ByteRange.suffix(3).headerValue() == "bytes=-3")
        for range in [S3ByteRange.bytes(3..<3), .bytes(-1..<3), .from(-1), .suffix(0), .suffix(-5)] {
            #expect(throws: S3Error.self) { try range.headerValue() }
        }
    }

    @Test func listingTimesAreReadStrictly() {
        #expect(ISO8601Time.parse("2013-05-24T00:00:00.000Z") == Date(timeIntervalSince1970: 1_369_353_600))
        #expect(ISO8601Time.parse("2024-02-29T23:59:59Z") == Date(timeIntervalSince1970: 1_709_251_199))
        #expect(ISO8601Time.parse("1970-01-01T00:00:00.5Z") == Date(timeIntervalSince1970: 0.5))
        for text in ["", "2013-05-24", "2013-05-24T00:00:00", "2013-13-24T00:00:00Z", "2013-05-24T24:00:00Z", "2013-05-24T00:00:00.Z",
                     "2013-05-24T00:00:00+01:00", "-013-05-24T00:00:00Z", "2013-05-24T00:00:00.1a2Z", "2013-05-24 00:00:00Z"] {
            #expect(ISO8601Time.parse(text) == nil, "\(text)")
        }
    }
}
