import Foundation

/// Uploads a sealed model to the blob store under its address (the SHA-256 of its bytes), unless
/// the server already has those bytes (`HEAD /v1/blobs/ADDRESS`). Used by `coffer blob upload` and
/// `coffer deployment create`.
struct BlobUpload {
    let client: APIClient
    /// The team the upload is made for.
    let team: String

    struct Outcome {
        let address: String
        let size: UInt64
        /// Whether the bytes were sent (false: the server had them).
        let sent: Bool
        /// Whether the server stored them as new (false when it had them, or got them meanwhile).
        let created: Bool
    }

    /// Hashes `file`, then sends it if the server lacks it, with a progress bar on a terminal.
    func run(_ file: String) async throws -> Outcome {
        let (address, size) = try FileDigest.sha256(of: file)
        if try await client.exists(["v1", "blobs", address]) {
            return Outcome(address: address, size: size, sent: false, created: false)
        }
        var request = client.request("PUT", ["v1", "teams", team, "blobs", address])
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let bar = ProgressBar.make(total: size, label: "uploading " + Printable.text(file), quiet: false)
        let answer: HTTPTransport.Answer
        do {
            answer = try await client.upload(request, fromFile: file, progress: bar?.1)
            bar?.0.finish()
        } catch {
            bar?.0.finish()
            throw error
        }
        let blob = try client.decode(API.Blob.self, from: answer)
        guard blob.sha256 == address, blob.size == Int64(size) else {
            throw ServerFailure.unexpectedAnswer(from: client.server, "it stored \(blob.size) bytes as \(blob.sha256)")
        }
        return Outcome(address: address, size: size, sent: true, created: blob.created)
    }
}
