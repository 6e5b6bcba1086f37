/// The earliest OS releases that load a Core ML specification version (coremltools' `_SPECIFICATION_VERSION_*`
/// constants and Apple's "Core ML model specification versions" table).
enum DeploymentTargets {
    /// Releases by platform for `specificationVersion`; empty for versions this table does not know.
    static func minimum(forSpecificationVersion version: Int) -> [String: String] {
        switch version {
        case 1: ["iOS": "11.0", "macOS": "10.13", "tvOS": "11.0", "watchOS": "4.0"]
        case 2: ["iOS": "11.2", "macOS": "10.13.2", "tvOS": "11.2", "watchOS": "4.2"]
        case 3: ["iOS": "12.0", "macOS": "10.14", "tvOS": "12.0", "watchOS": "5.0"]
        case 4: ["iOS": "13.0", "macOS": "10.15", "tvOS": "13.0", "watchOS": "6.0"]
        case 5: ["iOS": "14.0", "macOS": "11.0", "tvOS": "14.0", "watchOS": "7.0"]
        case 6: ["iOS": "15.0", "macOS": "12.0", "tvOS": "15.0", "watchOS": "8.0"]
        case 7: ["iOS": "16.0", "macOS": "13.0", "tvOS": "16.0", "watchOS": "9.0"]
        case 8: ["iOS": "17.0", "macOS": "14.0", "tvOS": "17.0", "watchOS": "10.0", "visionOS": "1.0"]
        case 9: ["iOS": "18.0", "macOS": "15.0", "tvOS": "18.0", "watchOS": "11.0", "visionOS": "2.0"]
        case 10: ["iOS": "26.0", "macOS": "26.0", "tvOS": "26.0", "watchOS": "26.0", "visionOS": "26.0"]
        default: [:]
        }
    }
}
