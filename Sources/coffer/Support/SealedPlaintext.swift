import CofferFormat
import Foundation
import ModelInspection

/// A sealed file's plaintext as random-access bytes: each read decrypts and authenticates only the chunks it
/// covers, so inspecting a large sealed model needs no more memory than inspecting the plain file.
struct SealedPlaintext: ModelInspection.ByteSource {
    let reader: SealedModel.Reader

    init(_ reader: SealedModel.Reader) { self.reader = reader }

    var count: UInt64 { reader.plaintextLength }

    func read(at offset: UInt64, length: Int) throws -> Data {
        guard length >= 0, offset <= count, UInt64(length) <= count - offset else {
            throw InspectionError.malformed(format: "file", reason: "ends before byte \(offset + UInt64(max(length, 0)))")
        }
        return Data(try reader.read(range: offset..<offset + UInt64(length)))
    }
}
