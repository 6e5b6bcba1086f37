/// What a device says about itself when it asks for a manifest.
///
/// Every attribute but `deviceID` is optional; a clause about an attribute the device did not send
/// is false, so a rule never matches a device by accident.
struct DeviceAttributes: Sendable, Equatable {
    /// The device's stable identifier, which also decides its rollout bucket.
    var deviceID: String
    /// One of phone, tablet, desktop, tv, watch, vision, server, embedded.
    var deviceClass: String?
    /// The operating system's name, e.g. iOS.
    var osName: String?
    /// The operating system's version, e.g. 17.4.1.
    var osVersion: String?
    /// The app's version, e.g. 3.2.
    var appVersion: String?
    /// A BCP 47 language tag, e.g. en or en-GB.
    var language: String?
    /// A region code, e.g. US.
    var region: String?
    /// The CPU architecture, e.g. arm64 or x86_64.
    var arch: String?
    /// The device's memory in GiB.
    var memoryGiB: Double?
    /// Attributes the app defines, by name.
    var custom: [String: String]

    /// A device with the given attributes; those left out were not sent.
    init(
        deviceID: String, deviceClass: String? = nil, osName: String? = nil, osVersion: String? = nil,
        appVersion: String? = nil, language: String? = nil, region: String? = nil, arch: String? = nil,
        memoryGiB: Double? = nil, custom: [String: String] = [:]
    ) {
        self.deviceID = deviceID
        self.deviceClass = deviceClass
        self.osName = osName
        self.osVersion = osVersion
        self.appVersion = appVersion
        self.language = language
        self.region = region
        self.arch = arch
        self.memoryGiB = memoryGiB
        self.custom = custom
    }
}
