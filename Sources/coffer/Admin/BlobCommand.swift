import ArgumentParser
import CofferFormat
import Foundation
import ModelInspection

/// `coffer blob`: sealed models stored on the server by content address (SHA-256).
struct BlobCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blob",
        abstract: "Upload sealed models to the server and download them by address.",
        subcommands: [Upload.self, Download.self]
    )

    /// `coffer blob upload --team T FILE.coffer`.
    struct Upload: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "upload",
            abstract: "Upload a sealed model (.coffer); prints its address, the SHA-256 of its bytes.",
            discussion: "Nothing is sent if the server already has those bytes. A progress bar shows on a terminal for large files."
        )

        @Option(help: "The team uploading it.")
        var team: String

        @Argument(help: ArgumentHelp("The sealed model.", valueName: "FILE.coffer"))
        var file: String

        @Flag(help: "Print the address, size and URL as JSON.")
        var json = false

        @OptionGroup(title: "Recording what is inside (optional)") var key: KeyOptions

        struct Uploaded: Encodable {
            let sha256: String
            let size: UInt64
            /// Whether these bytes were new to the server.
            let created: Bool
            let url: String
            /// Whether the model's facts were sent (with --key or a passphrase).
            let factsRecorded: Bool
        }

        func run() async throws {
            let client = try APIClient.configured()
            // With a key, the model inside is inspected before anything is sent, so a wrong key or a
            // damaged model stops the upload; its facts follow the upload for the deployment pages.
            var report: ModelReport?
            if key.isGiven {
                let header = try SealedModel.readHeader(path: file, maximumHeaderLength: SealedModel.maximumHeaderLength)
                report = try SealedInspection.report(file, header: header, using: try key.material())
            }
            let upload = try await BlobUpload(client: client, team: team).run(file)
            if let report {
                try await ModelFactsUpload(client: client, team: team).run(report, address: upload.address)
            }
            let url = ServerAddress.url(client.server, ["v1", "blobs", upload.address]).absoluteString
            if json {
                print(JSONOutput.render(Uploaded(sha256: upload.address, size: upload.size, created: upload.created, url: url,
                                                 factsRecorded: report != nil)))
            } else {
                let what = upload.created ? "Uploaded \(file)" : "The server already has \(file)"
                Printable.say("\(what) (\(upload.size) bytes): \(upload.address)\n\(url)")
                if report != nil { Printable.say("Recorded what is inside it (coffer inspect --key shows the same).") }
            }
        }
    }

    /// `coffer blob download SHA256 --output OUT [--server URL] [--range START-END]`.
    struct Download: NetworkCommand {
        static let configuration = CommandConfiguration(
            commandName: "download",
            abstract: "Download a blob by its address; a whole blob is checked against its SHA-256.",
            discussion: "Blobs are public (they are sealed): no token is needed or sent."
        )

        @Argument(help: ArgumentHelp("The blob's address: the SHA-256 of its bytes.", valueName: "SHA256"))
        var address: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write.", valueName: "OUT"))
        var output: String

        @Option(help: ArgumentHelp("The server (default: COFFER_SERVER, else the one you logged in to).", valueName: "URL"))
        var server: String?

        @Option(help: ArgumentHelp("Only bytes START to END (inclusive), or START- to the end.", valueName: "START-END"))
        var range: ByteRange?

        @Flag(help: "Replace OUT if it exists.")
        var force = false

        @Flag(help: "Print the file, size and whether the SHA-256 was verified as JSON.")
        var json = false

        struct Downloaded: Encodable {
            let sha256: String
            let file: String
            let size: UInt64
            let range: String?
            let verified: Bool
        }

        mutating func validate() throws {
            address = address.lowercased()
            guard address.utf8.count == 64, address.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw ValidationError("a blob address is a SHA-256: 64 hex digits")
            }
        }

        func run() async throws {
            let client = try server.map { APIClient(server: try ServerAddress.parse($0), token: nil) } ?? APIClient.anonymous()
            // The bytes land in a temporary file only this user can read; it is removed on any
            // failure (and on a signal), and renamed into place once complete and verified.
            let out = try AtomicOutput(finalPath: output, replacing: force)
            let file = try out.createFile(mode: 0o600)
            let result: (written: UInt64, verified: Bool)
            do {
                result = try await BlobDownload(client: client, address: address, range: range).run(into: file)
                try file.synchronize()
                // A blob is sealed: once it is whole, it is readable like any file made here (0644 less the umask).
                guard fchmod(file.descriptor, 0o644 & ~FileCreationMask.current) == 0 else {
                    throw IOFailure(operation: .create, path: output, errno: errno)
                }
            } catch {
                out.discard()
                throw error
            }
            try out.commit()
            if json {
                print(JSONOutput.render(Downloaded(sha256: address, file: output, size: result.written, range: range?.text, verified: result.verified)))
            } else {
                let check = result.verified ? ", SHA-256 verified" : ""
                let part = range.map { "bytes \($0.text) of " } ?? ""
                Printable.say("Wrote \(part)\(address) to \(output) (\(result.written) bytes\(check)).")
            }
        }
    }
}
