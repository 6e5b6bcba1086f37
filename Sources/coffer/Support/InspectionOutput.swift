import CofferFormat
import Foundation
import ModelInspection

/// What `coffer inspect` prints: the facts it always knew (a container's header, or a file's kind, size and
/// files), then the model inside as ``ModelReport`` under `model`, or why it could not be read under `error`.
struct InspectionOutput<Base: Encodable>: Encodable {
    let base: Base
    let baseText: String
    /// `nil` when the model was not looked at (a sealed file without a key).
    let inspection: Result<ModelReport, any Error>?

    private enum Keys: String, CodingKey { case model, error }

    var errorMessage: String? {
        if case .failure(let error as InspectionError)? = inspection { return error.description }
        return nil
    }

    func encode(to encoder: any Encoder) throws {
        try base.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        if case .success(let report)? = inspection { try container.encode(report, forKey: .model) }
        try container.encodeIfPresent(errorMessage, forKey: .error)
    }

    var text: String {
        switch inspection {
        case .success(let report)?:
            // A sealed model's base is its header: the whole report follows. A plain model's base already has
            // the first line and the files: the facts go between them.
            if baseText.hasSuffix(":") { return baseText + "\n" + Self.printable(report.text) }
            let details = Self.printable(report.detailText)
            guard !details.isEmpty else { return baseText }
            var lines = baseText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.insert(details, at: 1)
            return lines.joined(separator: "\n")
        case .failure?:
            return baseText + "\n  cannot read the model: " + Printable.text(errorMessage ?? "")
        case nil:
            return baseText
        }
    }
}

extension InspectionOutput {
    /// Text from a model file, line by line with control characters escaped (names in a hostile file could
    /// otherwise move the cursor or rewrite the terminal).
    static func printable(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { Printable.text(String($0)) }.joined(separator: "\n")
    }
}
