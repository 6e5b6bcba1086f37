/// The longest container header the server reads: 32 MiB, a version 2 chunk table of about
/// 930,000 chunks (a model of 57 GiB or more at the writer's smallest chunk, 64 KiB; the SDK reads
/// at most 16 MiB of a header for a delta).
///
/// A version 2 header is mostly its chunk table, and the server reads it whole whenever a
/// deployment names the blob or a model page shows it: a valid container of one-byte chunks
/// would make each of those reads cost gigabytes (and over 4 GiB trap in NIO's buffer, ending the
/// server for every team). Uploads with a longer header are refused from their first bytes (422
/// `not_a_container`); a blob stored before this limit is refused when its header is read.
enum StoredHeader {
    static let maximumLength = 32 << 20
}
