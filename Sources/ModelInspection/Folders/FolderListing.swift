import Foundation

/// A folder's regular files and subfolders, walked without following links, with a cap on entries.
struct FolderListing {
    /// Entries sorted by path; folders end in `/`.
    var entries: [FileEntry] = []
    /// The sum of the regular files' sizes.
    var size: UInt64 = 0

    init(root: URL, limits: InspectionLimits) throws {
        let manager = FileManager.default
        var pending = [""]
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? root : root.appendingPathComponent(relative)
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: folder.path)
            } catch {
                throw InspectionError.unreadable(path: folder.path, reason: "cannot list it")
            }
            for name in names {
                let path = relative.isEmpty ? name : relative + "/" + name
                guard entries.count < limits.maximumFolderEntries else {
                    throw InspectionError.tooLarge(format: "folder", what: "the number of entries",
                                                   size: UInt64(entries.count + 1), limit: UInt64(limits.maximumFolderEntries))
                }
                let attributes = try? manager.attributesOfItem(atPath: root.appendingPathComponent(path).path)
                let type = attributes?[.type] as? FileAttributeType
                if type == .typeDirectory {
                    entries.append(FileEntry(path: path + "/", size: nil))
                    pending.append(path)
                } else if type == .typeRegular {
                    let bytes = (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
                    entries.append(FileEntry(path: path, size: bytes))
                    size = size.addingSaturated(bytes)
                } else {
                    entries.append(FileEntry(path: path, size: nil))
                }
            }
        }
        entries.sort { $0.path < $1.path }
    }

    /// The total size of the regular files under `prefix` (a folder path ending in `/`).
    func size(under prefix: String) -> UInt64 {
        entries.filter { $0.path.hasPrefix(prefix) }.reduce(UInt64(0)) { $0.addingSaturated($1.size ?? 0) }
    }
}
