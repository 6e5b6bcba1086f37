import Foundation
import ModelInspection

/// Sends what is inside a sealed model (its ``ModelReport``) for the blob just uploaded:
/// `PUT /v1/teams/TEAM/blobs/ADDRESS/facts`. The server stores it per team and blob and shows it with
/// every model version that uses the blob.
struct ModelFactsUpload {
    let client: APIClient
    let team: String

    func run(_ report: ModelReport, address: String) async throws {
        _ = try await client.send(client.request("PUT", ["v1", "teams", team, "blobs", address, "facts"], json: report))
    }
}
