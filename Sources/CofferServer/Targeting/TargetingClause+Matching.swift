extension TargetingClause {
    /// Whether a device with these attributes and this rollout bucket satisfies the clause. A clause
    /// about an attribute the device did not send (or sent empty, or as an unreadable version) is
    /// false, for `!=` too; a bucket outside 0..<10000 never satisfies a rollout clause.
    func matches(_ device: DeviceAttributes, bucket: Int) -> Bool {
        switch self {
        case .text(let attribute, let op, let values):
            guard let value = attribute.value(of: device), !value.isEmpty else { return false }
            if case .custom = attribute { return op.holds(for: values) { $0 == value } }
            let folded = value.lowercased()
            return op.holds(for: values) { $0.lowercased() == folded }
        case .language(let op, let ranges):
            guard let tag = device.language, !tag.isEmpty else { return false }
            return op.holds(for: ranges) { $0.matches(tag) }
        case .version(let attribute, let op, let versions):
            guard let text = attribute == .osVersion ? device.osVersion : device.appVersion,
                  let version = Version(text)
            else { return false }
            return op.holds(version, against: versions)
        case .memory(let op, let amounts):
            guard let memory = device.memoryGiB, memory.isFinite, memory >= 0 else { return false }
            return op.holds(memory, against: amounts.map(\.doubleValue))
        case .rollout(let basisPoints):
            return (0..<RolloutBucket.count).contains(bucket) && bucket < basisPoints
        }
    }
}

extension TargetingClause.TextAttribute {
    /// What the device sent for this attribute, if anything.
    func value(of device: DeviceAttributes) -> String? {
        switch self {
        case .deviceClass: device.deviceClass
        case .osName: device.osName
        case .region: device.region
        case .arch: device.arch
        case .custom(let name): device.custom[name]
        }
    }
}
