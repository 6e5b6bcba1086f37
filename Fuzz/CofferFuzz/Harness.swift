import CofferAttestation
import CofferFormat
import Crypto
import Foundation
import ModelInspection
import SwiftASN1
import X509

/// One fuzz input: the first byte picks the parser, the rest is the outside data it gets.
///
/// 0: the container header parser. 1: a whole container opened with a fixed key. 2: the same, but
/// with the header MAC recomputed so mutated headers reach the length and chunk logic. 3: the
/// packed-tree unpacker, restoring into a scratch folder. 4: a signed manifest envelope, verified
/// with a fixed key. 5: a manifest payload, signed here with that key so mutated payloads reach
/// the manifest decoder. 6–9: ModelInspection's readers of a Core ML specification, an ONNX model, a
/// safetensors header and a GGUF header. 10 and 11: the Core ML and ONNX readers with limits so small that
/// the field-by-field skeleton walk is used instead of whole decoding. 12–16: attestation evidence
/// (docs/ATTESTATION.md): the CBOR reader, an App Attest attestation object and its authenticator
/// data, an App Attest assertion checked against a fixed key, an X.509 certificate and the Android
/// KeyDescription it carries (or the input itself as one), and Google's revocation list JSON. Any
/// thrown error is a correct refusal; only a crash, a sanitizer report or a hang is a finding.
enum Harness {
    static let key = try! ModelKey(id: "fuzzkey", name: "fuzz", created: Date(timeIntervalSince1970: 0),
                                   key: .init(data: [UInt8](repeating: 0x42, count: 32)))
    static let signingKey = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x24, count: 32))
    static let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-fuzz-\(getpid())").path

    static func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let data = Array(input.dropFirst())
        switch mode % 17 {
        case 12, 13, 14, 15, 16:
            attestation(data, mode: mode % 17)
        case 6, 7, 8, 9, 10, 11:
            inspect(Data(data), mode: mode % 17)
        case 4:
            _ = try? SignedManifest.verify(Data(data), using: signingKey.publicKey, now: nil)
        case 5:
            _ = try? SignedManifest.verify(envelope(payload: Data(data)), using: signingKey.publicKey, now: nil)
        case 0:
            _ = try? ContainerHeader.preamble(from: data)
            _ = try? ContainerHeader(parsing: data)
        case 1:
            openAll(data)
        case 2:
            openAll(remaced(data))
        default:
            unpack(data)
        }
    }

    static let assertionKey = AttestedKey(keyID: [], publicKey: Array(P256.Signing.PrivateKey().publicKey.x963Representation), counter: 0)
    static let applePolicy = AppleAppAttestPolicy(teamID: "ABCDE12345", bundleID: "com.example.fuzz", environment: .production)
    static let androidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    static func attestation(_ data: [UInt8], mode: UInt8) {
        switch mode {
        case 12:
            _ = try? CBORReader.read(data)
        case 13:
            if let object = try? AppleAttestationObject(bytes: data) { _ = try? AppleAuthenticatorData(bytes: object.authData) }
            _ = try? AppleAuthenticatorData(bytes: data)
        case 14:
            _ = try? AppleAppAttestVerifier(trustedRoots: []).verifyAssertion(data, clientData: [1], key: assertionKey, policy: applePolicy)
        case 15:
            if let certificate = try? Certificate(derEncoded: data),
               let value = certificate.extensions.first(where: { $0.oid == androidExtension })?.value {
                _ = try? AndroidKeyDescription(derEncoded: Array(value))
            }
            _ = try? AndroidKeyDescription(derEncoded: data)
        default:
            _ = try? AndroidRevocationList(json: data)
        }
    }

    /// Tiny limits: every Core ML or ONNX input over 250 bytes goes through the skeleton walk.
    static let smallLimits = InspectionLimits(
        maximumMessageBytes: 250, maximumPartBytes: 4096, maximumHeaderBytes: 4096, maximumSideFileBytes: 4096,
        maximumListedTensors: 16, maximumListedLabels: 16, maximumFolderEntries: 64)

    static func inspect(_ data: Data, mode: UInt8) {
        let names: [UInt8: String] = [6: "m.mlmodel", 7: "m.onnx", 8: "m.safetensors", 9: "m.gguf", 10: "m.mlmodel", 11: "m.onnx"]
        let limits = mode >= 10 ? smallLimits : .default
        _ = try? ModelInspector.inspect(data: data, name: names[mode]!, limits: limits)
    }

    static func openAll(_ data: [UInt8]) {
        guard let reader = try? SealedModel.Reader(bytes: data, using: .modelKey(key)) else { return }
        _ = try? reader.read(range: 0..<min(reader.plaintextLength, 1 << 20))
    }

    /// Re-signs a mutated header with the fuzz key (a "validly authenticated lie").
    static func remaced(_ data: [UInt8]) -> [UInt8] {
        guard let preamble = try? ContainerHeader.preamble(from: data), data.count >= preamble.headerLength,
              case let length = preamble.headerLength,
              var header = try? ContainerHeader(parsing: Array(data.prefix(length)))
        else { return data }
        header.mac = SealedModel.headerMAC(for: header, using: .modelKey(key)) ?? header.mac
        return header.encoded() + data.dropFirst(length)
    }

    /// An envelope around `payload` with a valid signature by the fuzz key.
    static func envelope(payload: Data) -> Data {
        let signed = SignedManifest.preAuthenticationEncoding(payloadType: SignedManifest.payloadType, payload: payload)
        let signature = (try? signingKey.signature(for: signed)) ?? Data()
        let object: [String: Any] = [
            "payloadType": SignedManifest.payloadType, "payload": payload.base64EncodedString(),
            "signatures": [["keyid": "fuzz", "sig": signature.base64EncodedString()]],
        ]
        return (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
    }

    static func unpack(_ data: [UInt8]) {
        TreeUnpacker.removeTree(scratch)
        defer { TreeUnpacker.removeTree(scratch) }
        guard let unpacker = try? TreeUnpacker(destination: scratch) else { return }
        let split = data.count / 2
        do {
            try data[..<split].withUnsafeBytes { try unpacker.consume($0) }
            try data[split...].withUnsafeBytes { try unpacker.consume($0) }
            try unpacker.finish()
        } catch {}
    }
}

#if COFFER_FUZZING
/// libFuzzer's entry point for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    Harness.run(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Built with `-sanitize=fuzzer` (Fuzz/run.sh): hands control to libFuzzer's driver, which takes
/// libFuzzer's usual flags and corpus folders. SwiftPM names every executable's entry point itself,
/// so the driver is started from here rather than from libFuzzer's own `main`.
@main
struct Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
    }
}
#else
/// Without libFuzzer: replays the given files (a corpus or crash reproducers) through the harness.
@main
struct Replay {
    static func main() throws {
        var count = 0
        for path in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            let files = isFolder.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: path).map { path + "/" + $0 } : [path]
            for file in files {
                Harness.run(Array(FileManager.default.contents(atPath: file) ?? Data()))
                count += 1
            }
        }
        print("replayed \(count) inputs without a crash")
    }
}
#endif
