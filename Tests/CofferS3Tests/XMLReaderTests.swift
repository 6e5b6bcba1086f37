import Foundation
import Testing
@testable import CofferS3

/// The XML reader and the answers read with it.
@Suite struct XMLReaderTests {
    static func parse(_ text: String) throws -> XMLElement { try XMLReader.parse(Array(text.utf8)) }

    @Test func readsTheGatewaysAnswers() throws {
        #expect(try InitiateMultipartUploadResult(Array(ResponseSamples.initiate.utf8)).uploadID == "2~oziYIA79FhxETkjnBKWjo-aQ25sql3M")

        let uploads = try ListMultipartUploadsResult(Array(ResponseSamples.uploadsPage.utf8))
        #expect(uploads.uploads.map(\.key) == ["big.bin"])
        #expect(uploads.uploads.map(\.uploadID) == ["2~oziYIA79FhxETkjnBKWjo-aQ25sql3M"])
        #expect(abs((uploads.uploads.first?.initiated.timeIntervalSince1970 ?? 0) - 1_795_557_520.488) < 0.0005)
        #expect(uploads.next?.keyMarker == "big.bin")
        #expect(uploads.next?.uploadIDMarker == "2~oziYIA79FhxETkjnBKWjo-aQ25sql3M")

        let listing = try ListBucketResult(Array(ResponseSamples.listing.utf8))
        #expect(listing.objects.map(\.key) == ["a&b<c", "dir/x.bin"])
        #expect(listing.objects.map(\.size) == [5, 11])
        #expect(listing.objects[0].etag == "\"5d41402abc4b2a76b9719d911017c592\"")
        #expect(listing.nextContinuationToken == nil)
        #expect(try ListBucketResult(Array(ResponseSamples.truncatedListing.utf8)).nextContinuationToken == "dir/x.bin")

        #expect(S3ErrorBody(Array(ResponseSamples.noSuchKey.utf8))?.code == "NoSuchKey")
        #expect(S3ErrorBody(Array(ResponseSamples.signatureDoesNotMatch.utf8))?.code == "SignatureDoesNotMatch")
        #expect(try CompleteMultipartUploadResult(Array(ResponseSamples.completed.utf8)) == .completed(etag: "\"3858f62230ac3c915f300c664312c11f-9\""))
        #expect(try CompleteMultipartUploadResult(Array(ResponseSamples.completedWithError.utf8)) == .failed(code: "InternalError"))

        // ListParts: the newest part's time (not the last part's), and the next page's marker.
        let parts = try ListPartsResult(Array(ResponseSamples.partsPage.utf8))
        #expect(abs((parts.lastModified?.timeIntervalSince1970 ?? 0) - 1_795_557_521.1) < 0.0005)
        #expect(parts.next == 2)
        let none = try ListPartsResult(Array(ResponseSamples.noParts.utf8))
        #expect(none.lastModified == nil && none.next == nil)
        for broken in [ResponseSamples.partsPage.replacingOccurrences(of: "<NextPartNumberMarker>2", with: "<NextPartNumberMarker>0"),
                       ResponseSamples.partsPage.replacingOccurrences(of: "<NextPartNumberMarker>2", with: "<NextPartNumberMarker>99999999999999999999"),
                       ResponseSamples.partsPage.replacingOccurrences(of: "2026-11-24T21:58:40.900Z", with: "yesterday")] {
            #expect(throws: XMLReader.Failure.self) { try ListPartsResult(Array(broken.utf8)) }
        }
    }

    @Test func decodesEntitiesAndCharacterReferences() throws {
        let root = try Self.parse("<a><b>&amp;&lt;&gt;&quot;&apos;&#65;&#x42;&#x1F600;<![CDATA[<&>]]></b><c/><d x='>' y=\"/\"></d></a>")
        #expect(root.text(of: "b") == "&<>\"'AB😀<&>")
        #expect(root.child("c") == XMLElement(name: "c"))
        #expect(root.child("d") == XMLElement(name: "d"))
    }

    @Test(arguments: [
        "", "   ", "text", "<a>", "<a></b>", "<a></a><b></b>", "<a></a>tail", "<a>&unknown;</a>", "<a>&amp</a>", "<a>&#0;</a>",
        "<a>&#xD800;</a>", "<a>&#x110000;</a>", "<a>&#12345678;</a>", "<a>&#;</a>", "<a>&#x;</a>", "<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
        "<a><!-- open", "<a><![CDATA[ open</a>", "<a attr='x></a>", "<a <b>></a>", "</a>", "<>x</>", "<a>\u{FFFD}</a>\u{0}x",
    ])
    func refusesWhatIsNotWellFormed(_ text: String) {
        #expect(throws: XMLReader.Failure.self) { try Self.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: XMLReader.Failure.self) { try XMLReader.parse([0x3C, 0x61, 0x3E, 0xFF, 0xFE, 0x3C, 0x2F, 0x61, 0x3E]) }
    }

    @Test func boundsDepthAndElementCount() throws {
        let deep = String(repeating: "<a>", count: XMLReader.maximumDepth + 1) + String(repeating: "</a>", count: XMLReader.maximumDepth + 1)
        #expect(throws: XMLReader.Failure.self) { try Self.parse(deep) }
        let fine = String(repeating: "<a>", count: XMLReader.maximumDepth) + String(repeating: "</a>", count: XMLReader.maximumDepth)
        #expect(try Self.parse(fine).name == "a")
        let wide = "<r>" + String(repeating: "<e/>", count: XMLReader.maximumElements) + "</r>"
        #expect(throws: XMLReader.Failure.self) { try Self.parse(wide) }
    }

    @Test func answersMissingTheirFieldsAreRefused() {
        #expect(throws: XMLReader.Failure.self) { try InitiateMultipartUploadResult(Array("<InitiateMultipartUploadResult/>".utf8)) }
        #expect(throws: XMLReader.Failure.self) { try ListBucketResult(Array("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>".utf8)) }
        #expect(throws: XMLReader.Failure.self) { try ListBucketResult(Array("<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>".utf8)) }
        #expect(throws: XMLReader.Failure.self) {
            try ListBucketResult(Array("<ListBucketResult><Contents><Key>k</Key><Size>99999999999999999999</Size><LastModified>2013-05-24T00:00:00Z</LastModified></Contents></ListBucketResult>".utf8))
        }
        #expect(throws: XMLReader.Failure.self) { try ListMultipartUploadsResult(Array("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated></ListMultipartUploadsResult>".utf8)) }
        #expect(throws: XMLReader.Failure.self) { try CompleteMultipartUploadResult(Array("<Other/>".utf8)) }
        #expect(S3ErrorBody(Array("<Error><Code>Bad Code\n</Code></Error>".utf8)) == nil)
        #expect(S3ErrorBody([]) == nil)
    }
}
