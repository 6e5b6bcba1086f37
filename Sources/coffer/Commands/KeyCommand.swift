import ArgumentParser
import CofferFormat

/// `coffer key`: model keys.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create model keys.",
        subcommands: [Generate.self, Create.self, List.self, Revoke.self]
    )

    /// `coffer key generate`: a new random model key in a `.modelkey` file.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Generate a 256-bit model key into a .modelkey file (mode 0600)."
        )

        @Option(help: "A name for the key (shown by inspect and the server).")
        var name: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Where to write (default: NAME.modelkey).", valueName: "FILE"))
        var output: String?

        @Flag(help: "Replace FILE if it exists.")
        var force = false

        @Flag(help: "Print the key's ID and name as JSON (never the key).")
        var json = false

        func validate() throws {
            guard !name.isEmpty, !name.contains("/"), name.utf8.count <= 200 else {
                throw ValidationError("--name must be 1 to 200 bytes with no '/'")
            }
        }

        func run() throws {
            let key = ModelKey.generate(name: name)
            let destination = output ?? name + ".modelkey"
            try KeyFiles.write(key, to: destination, replacing: force)
            if json {
                print(JSONOutput.render(["id": key.id, "name": key.name, "file": destination]))
            } else {
                print("Wrote \(destination) (key ID \(key.id)). Keep it secret: anyone with it can open your models.")
            }
        }
    }
}
