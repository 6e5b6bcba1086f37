// Uses the SDK the way an app does, so that building this package proves the product links without the
// server's packages. Nothing here talks to a server.
import Coffer
import Foundation

let cache = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-consumer-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: cache) }
let configuration = try CofferConfiguration(
    serverURL: URL(string: "https://models.example.com")!, appID: "6F9619FF-8B86-D011-B42D-00C04FC964FF", credential: "example",
    publicKey: "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik=", cacheDirectory: cache
)
let client = try CofferClient(configuration: configuration)
print("Coffer SDK ready; cached collection: \(String(describing: try client.cachedCollection(identifier: "FlowerModels")))")
