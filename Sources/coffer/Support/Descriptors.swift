import CofferFormat
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Writes to standard output and standard error without Foundation's buffering.
enum Descriptors {
    /// Writes all of `bytes` to `descriptor`, retrying on interruption and short writes.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, name: String) throws {
        var done = 0
        while done < bytes.count {
            let n = systemWrite(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw IOFailure(operation: .write, path: name, errno: errno)
            }
            done += n
        }
    }
}
