extension DeviceAttributes {
    /// The longest `deviceID`, and the longest value of any other parameter.
    static let maximumValueLength = 200
    /// The most `custom.NAME` parameters a device may send.
    static let maximumCustomAttributes = 32
    /// The parameter names other than `custom.NAME`.
    static let parameterNames = [
        "deviceID", "deviceClass", "osName", "osVersion", "appVersion", "language", "region", "arch", "memoryGiB",
    ]

    /// From query parameters: `deviceID` (required, 1–200 characters), `deviceClass`, `osName`,
    /// `osVersion`, `appVersion`, `language`, `region`, `arch`, `memoryGiB` and `custom.NAME=value`.
    ///
    /// Refuses, with a one-line reason: a missing or oversized `deviceID`, an unknown `deviceClass`,
    /// a `memoryGiB` that is not a finite number >= 0, an unknown parameter name, more than 32
    /// custom attributes, a custom name that is not 1–64 of `A-Z a-z 0-9 _ . -`, a value longer than
    /// 200 characters, and control characters in any name or value. A parameter other than
    /// `deviceID` with an empty value counts as not sent. Parameters are checked in name order, so
    /// the same query always gives the same error.
    init(query: [String: String]) throws(TargetingError) {
        // A valid query is read in the dictionary's order (no sorting on the usual request); one
        // that fails is read again in name order, and that pass throws the error.
        do {
            self = try Self.checked(query, in: query)
        } catch {
            self = try Self.checked(query, in: query.sorted { $0.key < $1.key })
        }
    }

    /// The attributes of `query`, its parameters checked in the order of `parameters`.
    private static func checked(
        _ query: [String: String], in parameters: some Sequence<(key: String, value: String)>
    ) throws(TargetingError) -> DeviceAttributes {
        var customCount = 0
        for (name, value) in parameters {
            if let (_, scalar) = TargetingText.firstForbidden(in: name) {
                throw TargetingError(reason: "a parameter name contains control character \(TargetingText.codePoint(scalar))")
            }
            guard TargetingText.length(of: value, upTo: Self.maximumValueLength) <= Self.maximumValueLength else {
                throw TargetingError(reason: "\(TargetingText.quoted(name)) is longer than \(Self.maximumValueLength) characters")
            }
            if let (_, scalar) = TargetingText.firstForbidden(in: value) {
                throw TargetingError(reason: "\(TargetingText.quoted(name)) contains control character \(TargetingText.codePoint(scalar))")
            }
            if name.hasPrefix(TargetingAttribute.customPrefix) { customCount += 1 }
        }
        guard customCount <= Self.maximumCustomAttributes else {
            throw TargetingError(reason: "\(customCount) custom attributes; the limit is \(Self.maximumCustomAttributes)")
        }
        guard let deviceID = query["deviceID"], !deviceID.isEmpty else { throw TargetingError(reason: "deviceID is missing") }
        var attributes = DeviceAttributes(deviceID: deviceID)
        for (name, value) in parameters where name != "deviceID" && !value.isEmpty {
            try attributes.set(name, to: value)
        }
        return attributes
    }

    /// Records the non-empty `value` of the parameter `name`, checking what the parameter requires.
    private mutating func set(_ name: String, to value: String) throws(TargetingError) {
        switch name {
        case "deviceClass":
            guard let known = DeviceClass(named: value) else {
                throw TargetingError(reason: "unknown deviceClass \(TargetingText.quoted(value)) (use \(DeviceClass.listed))")
            }
            deviceClass = known.rawValue
        case "osName": osName = value
        case "osVersion": osVersion = value
        case "appVersion": appVersion = value
        case "language": language = value
        case "region": region = value
        case "arch": arch = value
        case "memoryGiB":
            guard value.utf8.allSatisfy({ Self.numberBytes.contains($0) }), let memory = Double(value),
                  memory.isFinite, memory >= 0
            else { throw TargetingError(reason: "memoryGiB must be a finite number >= 0, not \(TargetingText.quoted(value))") }
            memoryGiB = memory + 0  // turns -0 into 0
        default:
            guard name.hasPrefix(TargetingAttribute.customPrefix) else {
                var reason = "unknown parameter \(TargetingText.quoted(name))"
                if let likely = Self.likely(name) { reason += " (did you mean '\(likely)'?)" }
                throw TargetingError(reason: reason)
            }
            let custom = name.dropFirst(TargetingAttribute.customPrefix.count)
            guard TargetingText.isCustomName(custom) else {
                throw TargetingError(reason: "custom attribute name \(TargetingText.quoted(custom)) must be 1 to 64 of A-Z a-z 0-9 _ . -")
            }
            self.custom[String(custom)] = value
        }
    }

    /// The bytes a `memoryGiB` value may hold: decimal digits, a point, an exponent and signs (no `inf`, `nan` or hex).
    private static let numberBytes = Set("0123456789.eE+-".utf8)

    /// The parameter someone probably meant by `name`: a known one spelt in another case.
    private static func likely(_ name: String) -> String? {
        let folded = name.lowercased()
        if folded == "memory" { return "memoryGiB" }
        if folded.hasPrefix(TargetingAttribute.customPrefix) { return TargetingAttribute.customPrefix + name.dropFirst(TargetingAttribute.customPrefix.count) }
        return parameterNames.first { $0.lowercased() == folded }
    }
}

extension DeviceAttributes {
    /// From a manifest request's query string, as ``init(query:)`` reads `DeviceQuery.parse(query)`.
    ///
    /// The usual query — only the named parameters, each once, all valid — is read in one pass
    /// without building a dictionary; anything else (custom attributes, a percent-encoded name, a
    /// repeated or unknown parameter, any refusal) is read again the full way, which gives the
    /// same attributes or the same error.
    init(queryString query: String?) throws(TargetingError) {
        if let attributes = Self.plain(query) {
            self = attributes
        } else {
            self = try DeviceAttributes(query: try DeviceQuery.parse(query))
        }
    }

    /// `parameterNames` as bytes, in the same order.
    private static let parameterBytes = parameterNames.map { Array($0.utf8) }

    /// The one-pass reading of a query with named parameters only; nil sends it the full way.
    static func plain(_ query: String?) -> DeviceAttributes? {
        guard let query, query.utf8.count <= 8192 else { return nil }
        var attributes = DeviceAttributes(deviceID: "")
        var seen = 0
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let rawName = pair[..<equals]
            guard let index = parameterBytes.firstIndex(where: { $0.count == rawName.count && $0.elementsEqual(rawName) }),
                  seen & (1 << index) == 0,
                  let value = DeviceQuery.decode(pair[pair.index(after: equals)...]),
                  TargetingText.length(of: value, upTo: maximumValueLength) <= maximumValueLength,
                  TargetingText.firstForbidden(in: value) == nil
            else { return nil }
            seen |= 1 << index
            let name = parameterNames[index]
            if name == "deviceID" {
                attributes.deviceID = value
            } else if !value.isEmpty {
                do { try attributes.set(name, to: value) } catch { return nil }
            }
        }
        return attributes.deviceID.isEmpty ? nil : attributes
    }
}
