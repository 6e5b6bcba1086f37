// TEMPORARY: replaced by the targeting branch.
struct DeviceAttributes: Sendable, Equatable {
    var deviceID: String
    var deviceClass: String?
    var osName: String?
    var osVersion: String?
    var appVersion: String?
    var language: String?
    var region: String?
    var arch: String?
    var memoryGiB: Double?
    var custom: [String: String]
    init(query: [String: String]) throws(TargetingError) {
        guard let id = query["deviceID"] else { throw TargetingError(reason: "deviceID is required") }
        deviceID = id; deviceClass = query["deviceClass"]; custom = [:]
    }
}
struct TargetingCondition: Sendable, Equatable {
    let text: String
    init(parsing text: String) throws(TargetingError) { self.text = text }
    var rolloutBasisPoints: Int? { nil }
    func matches(_ device: DeviceAttributes, bucket: Int) -> Bool { text == "deviceClass=\(device.deviceClass ?? "")" }
}
enum RolloutBucket { static func bucket(deviceID: String, seed: String) -> Int { 0 } }
struct TargetingError: Error, Equatable, CustomStringConvertible { let reason: String; var description: String { reason } }
