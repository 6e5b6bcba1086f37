import ArgumentParser
import Coffer

extension DeviceAttributes {
    /// The attributes given as `--attr NAME=VALUE` options (docs/TARGETING.md); a usage error
    /// names an unknown or repeated attribute.
    init(options items: [String]) throws {
        self.init()
        var seen: Set<String> = []
        for item in items {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--attr '\(item)' is not NAME=VALUE") }
            let name = String(parts[0])
            guard seen.insert(name).inserted else { throw ValidationError("--attr gives \(name) twice") }
            guard set(name, to: String(parts[1])) else {
                throw ValidationError("--attr \(name) is not a device attribute; use \(Self.names.joined(separator: ", ")) or custom.NAME")
            }
        }
    }
}
