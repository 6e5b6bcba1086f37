import Foundation

/// Small JSON files inside model folders (`Manifest.json`, `metadata.json`), read with a size cap.
enum SideFile {
    static func json(at url: URL, format: String, limits: InspectionLimits) throws -> Any {
        let source = try FileSource(path: url.path)
        let data = try source.readAll(format: format, what: url.lastPathComponent, limit: limits.maximumSideFileBytes)
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw InspectionError.malformed(format: format, reason: "\(url.lastPathComponent) is not valid JSON")
        }
        return object
    }
}
