import AsyncHTTPClient
import CofferS3
import Vapor

extension S3BlobStore {
    /// The connections to the store the pool keeps. A soft limit: a download asks on its client's
    /// event loop, and AsyncHTTPClient opens an overflow connection when that loop has none free.
    /// Every download streamed through the server holds one while it runs, so what bounds them is
    /// ``StreamSlots``, whose limit with a bucket (``StreamSlots/bucketLimit``) is as many.
    static let storeConnections = 256

    /// The store `settings` name, checked with a HEAD on the bucket: wrong credentials, a missing
    /// bucket or an unreachable endpoint stop the start with ``ObjectStoreUnavailable``, one line
    /// naming the setting. The HTTP client lives as long as `app`.
    static func open(_ settings: ObjectStoreSettings, app: Application) async throws -> S3BlobStore {
        // AsyncHTTPClient's read timeout runs while a download waits for its client (back-pressure
        // stops reading from the store): ten minutes, so a slow device is not cut off; a store that
        // stops mid-answer is noticed that late, and the device resumes with Range.
        var configuration = S3Client.httpClientConfiguration(readTimeout: .seconds(600))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: storeConnections)
        let http = HTTPClient(eventLoopGroupProvider: .shared(app.eventLoopGroup), configuration: configuration)
        app.lifecycle.use(HTTPClientShutdown(client: http))
        let client = try await checkedClient(settings, http: http)
        var store = S3BlobStore(client: client, presign: settings.presign)
        store.uploadMemory = UploadMemory(limit: settings.uploadMemory)
        return store
    }

    /// A client of the bucket `settings` name, after a HEAD on the bucket answered.
    /// - Throws: ``ObjectStoreUnavailable``, one line naming the setting.
    static func checkedClient(_ settings: ObjectStoreSettings, http: HTTPClient) async throws -> S3Client {
        do {
            let location = try S3Location(endpoint: settings.resolvedEndpoint, region: settings.region, bucket: settings.bucket,
                                          keyPrefix: settings.prefix, addressing: settings.addressing == .path ? .path : .virtual)
            let client = S3Client(location: location, credentials: S3Credentials(
                accessKeyID: settings.accessKeyID, secretAccessKey: settings.secretAccessKey, sessionToken: settings.sessionToken), httpClient: http)
            try await client.headBucket()
            return client
        } catch let error as S3Error {
            throw ObjectStoreUnavailable(store: settings.description, reason: error.description)
        }
    }
}

/// The object store named by COFFER_BLOB_STORE cannot be used: the one line `coffer-server` prints
/// at start (no secret: the store's description and the store's answer).
struct ObjectStoreUnavailable: Error, CustomStringConvertible {
    let store: String
    let reason: String
    var description: String { "the blob store \(store) (COFFER_BLOB_STORE) cannot be used: \(reason)" }
}

/// Shuts the object store's HTTP client down with the application.
private struct HTTPClientShutdown: LifecycleHandler {
    let client: HTTPClient
    func shutdownAsync(_ application: Application) async { try? await client.shutdown() }
}
