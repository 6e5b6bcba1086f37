import CofferFormat
import Foundation

/// An app's device credential, as the device commands take it: `--credential C`, `--credential-file
/// FILE` or COFFER_APP_CREDENTIAL. Never printed.
enum AppCredential {
    static let environmentVariable = "COFFER_APP_CREDENTIAL"
    static let maximumFileSize = 4096

    /// The credential from the option, the file or the environment, surrounding whitespace removed.
    static func resolve(option: String?, file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let text: String
        let source: String
        switch (option, file) {
        case (.some, .some):
            throw CLIFailure(.usage, "give --credential or --credential-file, not both")
        case (.some(let given), nil):
            (text, source) = (given, "--credential")
        case (nil, .some(let path)):
            let bytes: [UInt8]
            do {
                // The user's own file that nobody else may read or write (SecretFile), as ssh keys.
                bytes = try SecretFile.read(path, atMost: maximumFileSize + 1, what: "credential file")
            } catch let failure as IOFailure {
                throw CLIFailure(.noInput, "cannot read credential file \(path): \(failure.reason)")
            }
            guard bytes.count <= maximumFileSize else { throw CLIFailure(.usage, "credential file \(path) is over 4 KiB; is it the right file?") }
            (text, source) = (String(decoding: bytes, as: UTF8.self), path)
        case (nil, nil):
            guard let value = environment[environmentVariable], !value.isEmpty else {
                throw CLIFailure(.usage, "give the app's credential with --credential-file FILE (or --credential, or \(environmentVariable))")
            }
            (text, source) = (value, environmentVariable)
        }
        let credential = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !credential.isEmpty else { throw CLIFailure(.usage, "the credential in \(source) is empty") }
        guard credential.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw CLIFailure(.usage, "the credential in \(source) has spaces or characters a credential never has")
        }
        return credential
    }
}
