import AsyncHTTPClient
import Foundation
import NIOCore

/// A client of one bucket of an S3-compatible store (AWS S3, Ceph RADOS Gateway, MinIO, …).
///
/// Every request is signed with AWS Signature Version 4 (``SigV4Signer``). Object bodies are streamed
/// in both directions where it matters (``getObject(key:range:)`` hands out the response body as it
/// arrives, with AsyncHTTPClient's back-pressure); XML answers are collected up to
/// ``maximumResponseBytes`` and read by a bounded reader of this module. The client never retries:
/// one retry, if any, is the caller's decision.
///
/// The ``HTTPClient`` is the caller's: create it (``httpClientConfiguration(connectTimeout:readTimeout:)``
/// gives the connect and read timeouts), pass it in, and shut it down after the last request.
public final class S3Client: Sendable {
    /// The most bytes of an XML answer (listing, error, multipart result) the client reads.
    public static let maximumResponseBytes = 4 * 1024 * 1024

    /// Where the objects are.
    public let location: S3Location
    /// Time allowed from sending a request to its answer's head, and again for an answer read
    /// whole (an error, a listing page, a multipart result) to arrive; the body of a download is
    /// bounded by the HTTP client's read timeout instead, so that a long download is not cut off.
    public let requestTimeout: TimeAmount
    /// Signs every request with the credentials, in the location's region.
    let signer: SigV4Signer
    /// The caller's HTTP client (never shut down here).
    let httpClient: HTTPClient
    /// The signing time.
    let clock: @Sendable () -> Date

    /// A client of `location`, signing with `credentials`, sending through `httpClient`.
    /// - Parameters:
    ///   - requestTimeout: the deadline of each request up to its answer's head, and of reading
    ///     an answer read whole (not a download's body).
    ///   - clock: the signing time; tests pass a fixed or skewed one.
    public init(
        location: S3Location,
        credentials: S3Credentials,
        httpClient: HTTPClient,
        requestTimeout: TimeAmount = .seconds(30),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.location = location
        self.signer = SigV4Signer(credentials: credentials, region: location.region)
        self.httpClient = httpClient
        self.requestTimeout = requestTimeout
        self.clock = clock
    }

    /// An HTTP client configuration for a store: the given connect and read timeouts, no redirects
    /// (a redirected signed request would carry its Authorization to another host), no cookies.
    public static func httpClientConfiguration(connectTimeout: TimeAmount = .seconds(10), readTimeout: TimeAmount = .seconds(60)) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: connectTimeout, read: readTimeout)
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        return configuration
    }
}
