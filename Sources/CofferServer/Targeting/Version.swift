/// Version numbers compared component by component as integers: 17.10 > 17.9, 17 == 17.0 == 17.0.0.
///
/// A version is 1 to 4 dot-separated components of ASCII decimal digits, each 0...999_999 (leading
/// zeros allowed); anything else, such as `17.x`, `17.4-beta` or `1.2.3.4.5`, is not a version.
struct Version: Comparable, Sendable, CustomStringConvertible {
    /// The most components a version may have.
    static let maximumComponents = 4
    /// The largest value of one component.
    static let maximumComponent = 999_999

    /// The components as written, without leading zeros.
    let components: [Int]

    /// The version written in `text`, or nil if `text` is not a version.
    init?(_ text: String) {
        var components: [Int] = []
        var current = 0
        var digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, components.count < Self.maximumComponents - 1 else { return nil }
                components.append(current)
                current = 0
                digits = 0
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                current = current * 10 + Int(byte - UInt8(ascii: "0"))
                guard current <= Self.maximumComponent else { return nil }
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        components.append(current)
        self.components = components
    }

    /// The components joined by dots, e.g. `17.4.1`.
    var description: String { components.map(String.init).joined(separator: ".") }

    /// The component at `index`, or 0 past the last one, so that 17 and 17.0.0 compare equal.
    private func component(_ index: Int) -> Int {
        index < components.count ? components[index] : 0
    }

    /// Whether both versions are the same once missing components count as 0.
    static func == (lhs: Version, rhs: Version) -> Bool {
        (0..<maximumComponents).allSatisfy { lhs.component($0) == rhs.component($0) }
    }

    /// Whether `lhs` comes before `rhs`, comparing the first component that differs.
    static func < (lhs: Version, rhs: Version) -> Bool {
        for index in 0..<maximumComponents where lhs.component(index) != rhs.component(index) {
            return lhs.component(index) < rhs.component(index)
        }
        return false
    }
}
