import Coffer
import CofferFormat
import Foundation

/// Writes a decrypted model to a path, whole or not at all (`coffer open --output`, `coffer sync
/// --open`): a file model as a 0600 file, a folder model as a folder, committed by one rename.
enum DecryptedOutput {
    /// Decrypts `reader`'s model into `atomic` and commits it; on any failure nothing is left.
    static func write(_ reader: ModelReader, to atomic: AtomicOutput) throws {
        do {
            if reader.isFolder {
                let unpacker = try TreeUnpacker(destination: atomic.temporaryPath, expectedLength: reader.length)
                try reader.stream { piece in try piece.withUnsafeBytes { try unpacker.consume($0) } }
                try unpacker.finish()
            } else {
                let file = try atomic.createFile(mode: 0o600)
                try reader.decrypt(to: file)
                try file.synchronize()
            }
            try atomic.commit()
        } catch {
            atomic.discard()
            throw error
        }
    }
}
