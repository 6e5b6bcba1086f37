import ArgumentParser
import Testing
@testable import coffer

/// Every `coffer` command names itself. ArgumentParser builds the whole command tree on every run
/// and asks each command its name; one without `commandName` is named by `String(describing:)` of
/// its type, a dynamic cast that scans every protocol conformance in the binary — about a fifth of
/// the CLI's start (measured in docs/BENCHMARKS.md, "CLI start").
@Suite("coffer commands")
struct CommandNameTests {
    @Test("every command in the tree names itself, and no two siblings share a name")
    func named() {
        var unnamed: [String] = []
        var clashes: [String] = []
        func walk(_ command: ParsableCommand.Type, path: String) {
            let configuration = command.configuration
            guard let name = configuration.commandName else {
                unnamed.append("\(path) \(command)")
                return
            }
            var seen: Set<String> = []
            for child in configuration.subcommands {
                let childName = child.configuration.commandName ?? "\(child)"
                if !seen.insert(childName).inserted { clashes.append("\(path) \(name) \(childName)") }
                walk(child, path: path.isEmpty ? name : "\(path) \(name)")
            }
        }
        walk(CofferCommand.self, path: "")
        #expect(unnamed.isEmpty, "commands without commandName: \(unnamed)")
        #expect(clashes.isEmpty, "sibling commands with one name: \(clashes)")
    }
}
