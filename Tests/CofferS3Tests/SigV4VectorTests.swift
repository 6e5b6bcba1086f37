import Foundation
import Testing
@testable import CofferS3

/// The signer against AWS's published signatures (``SigV4Vector``).
@Suite struct SigV4VectorTests {
    static func sign(_ vector: SigV4Vector, secret: String? = nil) -> String {
        let s3 = vector.service == "s3"
        let credentials = S3Credentials(
            accessKeyID: s3 ? SigV4Vector.s3AccessKey : SigV4Vector.suiteAccessKey,
            secretAccessKey: secret ?? (s3 ? SigV4Vector.s3Secret : SigV4Vector.suiteSecret),
            sessionToken: vector.sessionToken
        )
        let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: vector.service)
        let headers = signer.headers(
            method: vector.method, encodedPath: SigV4Encoding.encode(vector.path, keepSlash: true), query: vector.query,
            headers: vector.headers, payload: .hashing(Array(vector.body.utf8)), date: s3 ? SigV4Vector.s3Date : SigV4Vector.suiteDate,
            contentHashHeader: vector.contentHashHeader
        )
        return headers.first { $0.name == "authorization" }?.value ?? ""
    }

    @Test(arguments: SigV4Vector.all)
    func reproducesThePublishedAuthorization(_ vector: SigV4Vector) {
        #expect(Self.sign(vector) == vector.expectedAuthorization)
    }

    @Test func buildsTheSuitesCanonicalRequestForFormParameters() {
        let vector = SigV4Vector.formParametersRequest
        let (text, signed) = SigV4Signer.canonicalRequest(
            method: vector.method, encodedPath: "/", query: [], headers: vector.headers + [("X-Amz-Date", "20150830T123600Z")],
            payload: .hashing(Array(vector.body.utf8))
        )
        #expect(text == SigV4Vector.formParametersCanonicalRequest)
        #expect(signed == "content-length;content-type;host;x-amz-date")
    }

    /// What makes each vector able to fail: one bit of the secret changes its signature.
    @Test(arguments: SigV4Vector.all)
    func aFlippedSecretByteChangesTheSignature(_ vector: SigV4Vector) {
        var secret = Array((vector.service == "s3" ? SigV4Vector.s3Secret : SigV4Vector.suiteSecret).utf8)
        secret[7] ^= 0x01
        #expect(Self.sign(vector, secret: String(decoding: secret, as: UTF8.self)) != vector.expectedAuthorization)
    }

    @Test func s3SignsTheDateTheContentHashAndTheToken() {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "SK", sessionToken: "TOKEN"), region: "us-east-1")
        let headers = signer.headers(method: "GET", encodedPath: "/b/k", query: [], headers: [("host", "h")], payload: .unsigned, date: SigV4Vector.s3Date)
        #expect(headers.map(\.name) == ["authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"])
        #expect(headers[1].value == "20130524T000000Z")
        #expect(headers[2].value == "UNSIGNED-PAYLOAD")
        #expect(headers[3].value == "TOKEN")
        #expect(headers[0].value.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"))
    }

    @Test func presignsTheDocumentedURL() throws {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: SigV4Vector.s3AccessKey, secretAccessKey: SigV4Vector.s3Secret), region: "us-east-1")
        let query = try signer.presignedQuery(method: "GET", host: "examplebucket.s3.amazonaws.com", encodedPath: "/test.txt", expires: 86400, date: SigV4Vector.s3Date)
        #expect(query == "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=\(SigV4Vector.presignedSignature)")
        let flipped = SigV4Signer(credentials: S3Credentials(accessKeyID: SigV4Vector.s3AccessKey, secretAccessKey: "x" + SigV4Vector.s3Secret.dropFirst()), region: "us-east-1")
        #expect(try flipped.presignedQuery(method: "GET", host: "examplebucket.s3.amazonaws.com", encodedPath: "/test.txt", expires: 86400, date: SigV4Vector.s3Date) != query)
    }

    @Test func presignedURLsThroughTheClientMatchTheDocument() throws {
        let location = try S3Location(endpoint: "https://s3.amazonaws.com", bucket: "examplebucket", addressing: .virtual)
        let url = try S3Location.presign(location, key: "test.txt", expires: 86400)
        #expect(url.hasPrefix("https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
        #expect(url.hasSuffix("&X-Amz-Signature=\(SigV4Vector.presignedSignature)"))
    }

    @Test(arguments: [0, -1, 604_801, Int.max, Int.min])
    func refusesLifetimesOutsideSevenDays(_ expires: Int) {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "SK"), region: "us-east-1")
        #expect(throws: S3Error.self) {
            try signer.presignedQuery(method: "GET", host: "h", encodedPath: "/k", expires: expires, date: SigV4Vector.s3Date)
        }
    }

    @Test(arguments: [1, 604_800])
    func acceptsTheLifetimeBounds(_ expires: Int) throws {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "SK", sessionToken: "T/+"), region: "us-east-1")
        let query = try signer.presignedQuery(method: "GET", host: "h", encodedPath: "/k", expires: expires, date: SigV4Vector.s3Date)
        #expect(query.contains("X-Amz-Expires=\(expires)&X-Amz-Security-Token=T%2F%2B&X-Amz-SignedHeaders=host&X-Amz-Signature="))
    }
}

extension S3Location {
    /// A presigned GET through ``S3Client/presignedGET(key:expires:now:)``'s path, without an HTTP client.
    static func presign(_ location: S3Location, key: String, expires: Int) throws -> String {
        let signer = SigV4Signer(credentials: S3Credentials(accessKeyID: SigV4Vector.s3AccessKey, secretAccessKey: SigV4Vector.s3Secret), region: location.region)
        let path = try location.encodedPath(forKey: key)
        return location.url(encodedPath: path, query: try signer.presignedQuery(method: "GET", host: location.hostHeader, encodedPath: path, expires: expires, date: SigV4Vector.s3Date))
    }
}
