import AsyncHTTPClient
import CofferS3

extension ConfigurationCheck {
    /// The bucket of COFFER_BLOB_STORE answers a HEAD with these credentials (what `serve` checks first).
    mutating func checkObjectStore(_ settings: ObjectStoreSettings) async {
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: S3Client.httpClientConfiguration())
        do {
            _ = try await S3BlobStore.checkedClient(settings, http: http)
            facts.append("the blob store \(settings) answers")
        } catch {
            problems.append(String(describing: error))
        }
        try? await http.shutdown()
    }
}
