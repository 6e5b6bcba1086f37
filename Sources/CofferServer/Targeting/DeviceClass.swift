/// The kinds of device that a device may report and a rule may name in `deviceClass`.
enum DeviceClass: String, CaseIterable, Sendable {
    /// The classes, as written in rules and queries (lower case).
    case phone, tablet, desktop, tv, watch, vision, server, embedded

    /// The classes listed for an error message: "phone, tablet, …, server or embedded".
    static let listed = allCases.dropLast().map(\.rawValue).joined(separator: ", ") + " or " + allCases.last!.rawValue

    /// The class named by `text`, ignoring case, or nil if there is none.
    init?(named text: some StringProtocol) {
        self.init(rawValue: text.lowercased())
    }
}
