import Foundation

/// How a device describes itself when it asks for a manifest; the server's targeting rules match
/// these (docs/TARGETING.md).
///
/// ``current`` detects what the platform tells: OS name and version, architecture, memory,
/// language, region and the app's version. A value the server would refuse (say a language that
/// is not a BCP 47 tag) is left out rather than sent. Set ``deviceClass`` yourself on iOS to tell
/// a tablet from a phone.
public struct DeviceAttributes: Sendable, Equatable {
    /// `phone`, `tablet`, `desktop`, `tv`, `watch`, `vision`, `server` or `embedded`.
    public var deviceClass: String?
    /// The operating system's name, such as `iOS` or `Linux`.
    public var osName: String?
    /// The operating system's version, such as `17.4`.
    public var osVersion: String?
    /// The app's version, such as `2.1`.
    public var appVersion: String?
    /// A BCP 47 language tag, such as `en-GB`.
    public var language: String?
    /// A region: two letters (`US`) or three digits (`419`).
    public var region: String?
    /// The CPU architecture, such as `arm64` or `x86_64`.
    public var arch: String?
    /// Physical memory in GiB, at most three decimals (`7.5`).
    public var memoryGiB: String?
    /// `custom.NAME` attributes: NAME → value.
    public var custom: [String: String]

    /// Attributes with nothing set.
    public init(deviceClass: String? = nil, osName: String? = nil, osVersion: String? = nil, appVersion: String? = nil,
                language: String? = nil, region: String? = nil, arch: String? = nil, memoryGiB: String? = nil,
                custom: [String: String] = [:]) {
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

    /// The names a device may send, besides `custom.NAME`.
    public static let names = ["deviceClass", "osName", "osVersion", "appVersion", "language", "region", "arch", "memoryGiB"]

    /// The query items sent with a manifest request, in a stable order.
    public var queryItems: [(name: String, value: String)] {
        let fixed: [(String, String?)] = [("deviceClass", deviceClass), ("osName", osName), ("osVersion", osVersion),
                                          ("appVersion", appVersion), ("language", language), ("region", region),
                                          ("arch", arch), ("memoryGiB", memoryGiB)]
        return fixed.compactMap { name, value in value.map { (name, $0) } }
            + custom.sorted { $0.key < $1.key }.map { ("custom." + $0.key, $0.value) }
    }

    /// Sets the attribute `name` (one of ``names`` or `custom.NAME`); false for an unknown name.
    public mutating func set(_ name: String, to value: String) -> Bool {
        switch name {
        case "deviceClass": deviceClass = value
        case "osName": osName = value
        case "osVersion": osVersion = value
        case "appVersion": appVersion = value
        case "language": language = value
        case "region": region = value
        case "arch": arch = value
        case "memoryGiB": memoryGiB = value
        default:
            guard name.hasPrefix("custom."), name.count > "custom.".count else { return false }
            custom[String(name.dropFirst("custom.".count))] = value
        }
        return true
    }
}
