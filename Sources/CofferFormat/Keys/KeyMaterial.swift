/// What a container is sealed or opened with.
public enum KeyMaterial: Sendable {
    /// A 256-bit model key (from a `.modelkey` file or the server).
    case modelKey(ModelKey)
    /// A passphrase's bytes (UTF-8 as typed; no trimming beyond one final newline of a file, done by the caller).
    case passphrase([UInt8])
}
