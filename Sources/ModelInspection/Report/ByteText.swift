/// Sizes in notes: whole MiB where they are, bytes otherwise.
enum ByteText {
    static func describe(_ bytes: UInt64) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}
