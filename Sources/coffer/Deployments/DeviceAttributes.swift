import ArgumentParser

/// The attributes a device describes itself with when it asks for a manifest (docs/TARGETING.md),
/// from `--attr NAME=VALUE` options, in the order given.
struct DeviceAttributes {
    /// The names a device may send, besides `custom.NAME`.
    static let names = ["deviceClass", "osName", "osVersion", "appVersion", "language", "region", "arch", "memoryGiB"]

    private(set) var pairs: [(name: String, value: String)] = []

    /// Parses `NAME=VALUE` items; a usage error names an unknown or repeated attribute.
    init(_ items: [String]) throws {
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--attr '\(item)' is not NAME=VALUE") }
            let name = String(parts[0])
            guard Self.names.contains(name) || (name.hasPrefix("custom.") && name.count > "custom.".count) else {
                throw ValidationError("--attr \(name) is not a device attribute; use \(Self.names.joined(separator: ", ")) or custom.NAME")
            }
            guard !pairs.contains(where: { $0.name == name }) else { throw ValidationError("--attr gives \(name) twice") }
            pairs.append((name, String(parts[1])))
        }
    }
}
