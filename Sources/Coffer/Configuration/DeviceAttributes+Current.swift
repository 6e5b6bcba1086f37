import Foundation

extension DeviceAttributes {
    /// What this platform tells about the device; see ``DeviceAttributes``.
    public static var current: DeviceAttributes {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let appVersion = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
        return DeviceAttributes(
            deviceClass: platformClass,
            osName: platformName,
            osVersion: "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)",
            appVersion: appVersion.flatMap { isVersion($0) ? $0 : nil },
            language: Locale.preferredLanguages.first.flatMap(languageTag),
            region: regionCode(Locale.current.identifier),
            arch: architecture,
            memoryGiB: gibibytes(ProcessInfo.processInfo.physicalMemory))
    }

    static var platformName: String {
        #if os(iOS)
        return "iOS"
        #elseif os(macOS)
        return "macOS"
        #elseif os(tvOS)
        return "tvOS"
        #elseif os(watchOS)
        return "watchOS"
        #elseif os(visionOS)
        return "visionOS"
        #elseif os(Linux)
        return "Linux"
        #elseif os(Windows)
        return "Windows"
        #elseif os(Android)
        return "Android"
        #else
        return "unknown"
        #endif
    }

    static var platformClass: String? {
        #if os(macOS)
        return "desktop"
        #elseif os(tvOS)
        return "tv"
        #elseif os(watchOS)
        return "watch"
        #elseif os(visionOS)
        return "vision"
        #elseif os(iOS)
        return "phone"
        #elseif os(Linux)
        return "server"
        #else
        return nil
        #endif
    }

    static var architecture: String? {
        #if arch(arm64)
        return "arm64"
        #elseif arch(x86_64)
        return "x86_64"
        #elseif arch(arm)
        return "arm"
        #elseif arch(i386)
        return "i386"
        #else
        return nil
        #endif
    }

    /// `bytes` in GiB with at most three decimals (`7.5`, `0.125`).
    static func gibibytes(_ bytes: UInt64) -> String? {
        guard bytes > 0 else { return nil }
        let thousandths = (bytes * 1000 + (1 << 29)) >> 30
        let whole = thousandths / 1000, fraction = thousandths % 1000
        guard fraction > 0 else { return String(whole) }
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(whole).\(decimals)"
    }

    /// `identifier` as a BCP 47 tag the server accepts (`en_US` → `en-US`), or nil.
    static func languageTag(_ identifier: String) -> String? {
        let tag = identifier.split(separator: ".").first.map(String.init)?.replacingOccurrences(of: "_", with: "-") ?? ""
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }),
              parts.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
        else { return nil }
        return tag
    }

    /// The region of a locale identifier (`en_US` → `US`), or nil.
    static func regionCode(_ identifier: String) -> String? {
        let base = identifier.split(separator: "@").first.map(String.init) ?? identifier
        let parts = base.replacingOccurrences(of: "-", with: "_").split(separator: "_").dropFirst()
        return parts.first { part in
            (part.count == 2 && part.allSatisfy { $0.isASCII && $0.isUppercase })
                || (part.count == 3 && part.allSatisfy { $0.isASCII && $0.isNumber })
        }.map(String.init)
    }

    static func isVersion(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return (1...4).contains(parts.count) && parts.allSatisfy { (1...6).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }
}
