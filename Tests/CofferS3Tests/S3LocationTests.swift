import Testing
@testable import CofferS3

/// Endpoints, buckets and keys: what is refused at start, and the URLs and paths that are sent and signed.
@Suite struct S3LocationTests {
    @Test func pathStyleKeepsTheBucketInThePath() throws {
        let location = try S3Location(endpoint: "http://127.0.0.1:27480/", bucket: "blobs", keyPrefix: "v1/")
        #expect(location.endpoint == "http://127.0.0.1:27480")
        #expect(location.hostHeader == "127.0.0.1:27480")
        #expect(location.bucketPath == "/blobs")
        #expect(try location.encodedPath(forKey: "ab/c d+é$") == "/blobs/v1/ab/c%20d%2B%C3%A9%24")
        #expect(location.url(encodedPath: "/blobs/k", query: "a=1") == "http://127.0.0.1:27480/blobs/k?a=1")
    }

    @Test func virtualStyleMovesTheBucketIntoTheHost() throws {
        let location = try S3Location(endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", bucket: "coffer-blobs", addressing: .virtual)
        #expect(location.hostHeader == "coffer-blobs.s3.eu-west-1.amazonaws.com")
        #expect(location.bucketPath == "/")
        #expect(try location.encodedPath(forKey: "x/y") == "/x/y")
    }

    @Test func defaultPortsAreLeftOutAndIPv6IsBracketed() throws {
        #expect(try S3Location(endpoint: "https://store:443", bucket: "abc").hostHeader == "store")
        #expect(try S3Location(endpoint: "http://store:80", bucket: "abc").hostHeader == "store")
        #expect(try S3Location(endpoint: "http://store:443", bucket: "abc").hostHeader == "store:443")
        let v6 = try S3Location(endpoint: "http://[::1]:9000", bucket: "abc")
        #expect(v6.host == "::1")
        #expect(v6.hostHeader == "[::1]:9000")
    }

    @Test(arguments: ["", "127.0.0.1:9000", "ftp://h", "http://", "http://h/path", "http://h?x=1", "http://u:p@h", "http://h#f", "http://h:0", "http://h:70000"])
    func refusesEndpointsThatAreNotSchemeHostPort(_ endpoint: String) {
        #expect(throws: S3Error.self) { try S3Location(endpoint: endpoint, bucket: "abc") }
    }

    @Test(arguments: ["ab", "ABC", "-abc", "abc-", "a..b", "a_b", String(repeating: "a", count: 64), "abc/d", "ab c"])
    func refusesBucketNamesS3Refuses(_ bucket: String) {
        #expect(throws: S3Error.self) { try S3Location(endpoint: "http://h", bucket: bucket) }
    }

    @Test(arguments: ["", "us east", "us/east", "é"])
    func refusesRegionsThatBreakTheScope(_ region: String) {
        #expect(throws: S3Error.self) { try S3Location(endpoint: "http://h", region: region, bucket: "abc") }
    }

    @Test(arguments: ["", ".", "a/../b", "./a", "a/.", "tab\there", "nul\u{0}", String(repeating: "k", count: 1025)])
    func refusesKeysThatCannotBeSentAsSigned(_ key: String) throws {
        let location = try S3Location(endpoint: "http://h", bucket: "abc")
        #expect(throws: S3Error.self) { try location.encodedPath(forKey: key) }
    }

    @Test func anEndpointWithCredentialsIsRefusedWithoutQuotingThem() {
        let error = #expect(throws: S3Error.self) { try S3Location(endpoint: "https://AKIDEXAMPLE:topsecret@s3.example.com", bucket: "abc") }
        #expect(!"\(String(describing: error))".contains("topsecret"))
        #expect(!"\(String(describing: error))".contains("AKIDEXAMPLE"))
    }

    @Test func errorsNameTheSettingAndStayOnOneLine() throws {
        let errors: [S3Error] = [
            .credentialsRejected(code: "SignatureDoesNotMatch"),
            .bucketMissing(bucket: "x", endpoint: "http://host:9000"),
            .unreachable(endpoint: "http://127.0.0.1:1", reason: "connection refused"),
            .accessDenied(operation: "PutObject", bucket: "x"),
            .clockSkewed,
            .rangeNotSatisfiable(key: "k", size: 10),
            .interrupted(operation: "GetObject", reason: "connection reset with 10 bytes of the body still due"),
            .unexpectedResponse(operation: "GetObject", status: 500, code: "InternalError"),
            .malformedResponse(operation: "ListObjectsV2", reason: "no root element"),
            .invalidArgument("a part number must be 1…10000, not 0"),
        ]
        for error in errors {
            #expect(!error.description.contains("\n"))
            #expect(!error.description.isEmpty)
        }
        #expect(errors[0].description == "AWS_SECRET_ACCESS_KEY or AWS_ACCESS_KEY_ID is rejected by the store (403 SignatureDoesNotMatch)")
        #expect(errors[1].description == "bucket 'x' does not exist at http://host:9000 (404 NoSuchBucket)")
        #expect(errors[2].description == "the store at http://127.0.0.1:1 cannot be reached (AWS_ENDPOINT_URL_S3): connection refused")
    }

    @Test func mapsStatusAndCodeToWhoMustAct() throws {
        let location = try S3Location(endpoint: "http://h:1", bucket: "abc")
        func map(_ status: Int, _ code: String?) -> S3Error { S3Client.failure(status: status, code: code, operation: "Op", location: location) }
        #expect(map(403, nil) == .credentialsRejected(code: nil))
        #expect(map(403, "InvalidAccessKeyId") == .credentialsRejected(code: "InvalidAccessKeyId"))
        #expect(map(403, "SignatureDoesNotMatch") == .credentialsRejected(code: "SignatureDoesNotMatch"))
        #expect(map(403, "AccessDenied") == .accessDenied(operation: "Op", bucket: "abc"))
        #expect(map(403, "RequestTimeTooSkewed") == .clockSkewed)
        #expect(map(404, "NoSuchBucket") == .bucketMissing(bucket: "abc", endpoint: "http://h:1"))
        #expect(map(404, "NoSuchKey") == .unexpectedResponse(operation: "Op", status: 404, code: "NoSuchKey"))
        #expect(map(200, "InternalError") == .unexpectedResponse(operation: "Op", status: 200, code: "InternalError"))
    }
}
