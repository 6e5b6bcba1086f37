import CofferFormat
import Foundation
import NIOCore
import Vapor
import _NIOFileSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Content-addressed, immutable blob files: `ROOT/ab/abcdef…` named by their SHA-256.
///
/// Uploads are written under `ROOT/incoming/` and renamed into place only when their digest,
/// size and container header check out, so a reader never sees a partial blob and several
/// instances can share one folder. One account has at most ``UploadSlots/perAccount`` of them in
/// progress on an instance at once.
struct FolderBlobStore: BlobStore {
    let root: String
    let headerFacts = HeaderFactsCache()
    /// The uploads each account has in progress here.
    var uploadSlots = UploadSlots()

    init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/incoming", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/collecting", withIntermediateDirectories: true)
    }

    func path(of address: String) -> String { root + "/" + address.prefix(2) + "/" + address }

    func size(of address: String) async throws -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path(of: address)))?[.size] as? Int64
    }

    /// Refused with 429 `too_many_uploads` (``APIError/tooManyUploads()``) when `uploader` has as
    /// many uploads in progress as ``uploadSlots`` allows one account, before a file is made.
    func beginUpload(for address: String?, by uploader: UUID) async throws -> any BlobUpload {
        guard uploadSlots.take(for: uploader) else { throw APIError.tooManyUploads() }
        do {
            return try await FolderUpload(store: self, path: root + "/incoming/" + UUID().uuidString, uploader: uploader)
        } catch {
            uploadSlots.giveBack(for: uploader)
            throw error
        }
    }

    /// Moves a verified upload into place (a no-op if another upload of the same bytes won).
    func publish(_ incoming: String, as address: String) throws {
        let folder = root + "/" + address.prefix(2)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if rename(incoming, path(of: address)) != 0 {
            let code = errno
            unlink(incoming)
            if !FileManager.default.fileExists(atPath: path(of: address)) { throw IOFailure(operation: .rename, path: address, errno: code) }
        }
        try DurableSync.synchronizeFolder(folder)
        // The `ab/` folder may be new: its name in the root must outlive a power cut too.
        try DurableSync.synchronizeFolder(root)
    }

    /// Streams `range` of the file in 1 MiB pieces (never the whole blob in memory; measured faster
    /// than 256 KiB pieces, docs/BENCHMARKS.md), and gives `slot` back when the reading task ends:
    /// after its last write, with the file closed, whether the body ended, failed or found its
    /// client gone (then Vapor may have let the response go already).
    func stream(_ address: String, range: Range<Int64>, status: HTTPResponseStatus, metrics: ServerMetrics,
                holding slot: StreamSlot) -> Response {
        let path = path(of: address)
        let response = Response(status: status)
        response.headers.contentType = .binary
        response.body = .init(asyncStream: { writer in
            defer { slot.release() }
            do {
                try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                    var offset = range.lowerBound
                    while offset < range.upperBound {
                        let length = min(Int64(1 << 20), range.upperBound - offset)
                        let chunk = try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(length))
                        guard chunk.readableBytes > 0 else { break }
                        offset += Int64(chunk.readableBytes)
                        metrics.bytesServed(chunk.readableBytes)
                        try await writer.write(.buffer(chunk))
                    }
                }
                try await writer.write(.end)
            } catch {
                try? await writer.write(.error(error))
            }
        }, count: Int(range.count))
        return response
    }

    /// Always nil: the folder's blobs are served by this server.
    func directURL(of address: String) -> String? { nil }

    /// Moves the file aside, so an upload that starts now finds it gone and sends it again: to
    /// `ROOT/collecting/ADDRESS.SECONDS.UUID`, out of reach of ``removeStaleUploads(olderThan:)``
    /// (a renamed file keeps its old modification time, so in `incoming/` it looked like an
    /// abandoned upload), its name saying which blob it is and since when it waits.
    func withdraw(_ address: String) async -> WithdrawnBlob {
        let aside = root + "/collecting/" + address + "." + String(Int64(Date().timeIntervalSince1970)) + "." + UUID().uuidString
        return WithdrawnBlob(address: address, aside: rename(path(of: address), aside) == 0 ? aside : nil)
    }

    /// The files of `collecting/` set aside before `cutoff`: a collection that died, or lost its
    /// database, between withdrawing and finishing left them.
    func setAside(before cutoff: Date) async -> [WithdrawnBlob] {
        let folder = root + "/collecting"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap { name in
            let parts = name.split(separator: ".")
            guard parts.count == 3, BlobAddress.isValid(String(parts[0])), let seconds = Int64(parts[1]),
                  Date(timeIntervalSince1970: TimeInterval(seconds)) < cutoff else { return nil }
            return WithdrawnBlob(address: String(parts[0]), aside: folder + "/" + name)
        }
    }

    func restore(_ blob: WithdrawnBlob) async {
        guard let aside = blob.aside else { return }
        // An upload may have put the same bytes back meanwhile: the rename replaces them with themselves.
        try? FileManager.default.createDirectory(atPath: root + "/" + blob.address.prefix(2), withIntermediateDirectories: true)
        if rename(aside, path(of: blob.address)) == 0 {
            try? DurableSync.synchronizeFolder(root + "/" + blob.address.prefix(2))
            try? DurableSync.synchronizeFolder(root)
        }
    }

    func remove(_ blob: WithdrawnBlob) async throws {
        if let aside = blob.aside { unlink(aside) }
    }

    /// Lists the blob files folder by folder (`ROOT/ab/`, one page each).
    func forEachStoredBlob(writtenBefore cutoff: Date, _ body: ([String]) async throws -> Void) async throws {
        let manager = FileManager.default
        for folder in (try? manager.contentsOfDirectory(atPath: root)) ?? [] where folder.utf8.count == 2 {
            let names = (try? manager.contentsOfDirectory(atPath: root + "/" + folder)) ?? []
            let old = names.filter { name in
                guard BlobAddress.isValid(name), name.hasPrefix(folder),
                      let modified = (try? manager.attributesOfItem(atPath: path(of: name)))?[.modificationDate] as? Date
                else { return false }
                return modified < cutoff
            }
            try await body(old)
        }
    }

    /// Removes unfinished uploads older than `age` seconds (left by a crash).
    @discardableResult
    func removeStaleUploads(olderThan age: TimeInterval = 3600) async throws -> Int {
        let folder = root + "/incoming"
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let path = folder + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
               Date().timeIntervalSince(modified) > age, unlink(path) == 0 {
                removed += 1
            }
        }
        return removed
    }
}
