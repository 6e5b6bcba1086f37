import CofferFormat
import Crypto

/// SHA-256 fed incrementally (swift-crypto), with a lowercase-hex result: the content address of
/// a blob, computed while a file is read or downloaded, in constant memory.
struct SHA256Digest {
    private var hasher = SHA256()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// The digest in lowercase hex; call once.
    func finalizeHex() -> String {
        hasher.finalize().hexString
    }
}
