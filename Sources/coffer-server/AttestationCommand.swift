import ArgumentParser
import CofferFormat
import CofferServer
import Foundation

/// `coffer-server attestation`: the offline inputs of attestation checks.
struct AttestationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attestation",
        abstract: "Manage what attestation checks rely on (docs/ATTESTATION.md).",
        subcommands: [UpdateRevocations.self]
    )

    /// `coffer-server attestation update-revocations FILE`.
    struct UpdateRevocations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update-revocations",
            abstract: "Store Google's attestation status list (revoked Android attestation certificates) for every server instance.",
            discussion: """
                FILE is the JSON Google publishes at https://android.googleapis.com/attestation/status, \
                fetched by any means (the server never fetches it). It is checked before anything is \
                stored; running servers use it within a minute. Run it as often as you fetch the list.
                """
        )

        @OptionGroup var options: ServerOptions

        @Argument(help: ArgumentHelp("The status list, JSON.", valueName: "FILE"))
        var file: String

        func run() async throws {
            let configuration = try options.configuration()
            // Nothing past 16 MiB is read: a device or pipe (size 0 to stat) that never ends is refused too.
            guard let data = try? BoundedFile.read(file, atMost: 16 * 1024 * 1024 + 1), data.count <= 16 * 1024 * 1024 else {
                FileHandle.standardError.write(Data("coffer-server: cannot read \(file) (or it is over 16 MiB)\n".utf8))
                throw ExitCode(66)
            }
            do {
                print(try await Server.updateRevocations(configuration, json: data))
            } catch {
                FileHandle.standardError.write(Data("coffer-server: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
