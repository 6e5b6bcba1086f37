import NIOCore
import NIOHTTP1

/// HTTP/1.1 responses as the bytes the device listener sends.
///
/// The listener writes whole responses as one buffer instead of going through NIO's response
/// encoder: a manifest's answer is made once per signing (``ManifestService/Answer``) and each
/// request then costs one write of shared bytes. Only headers the server made go in; nothing a
/// client sent is copied into a response head.
enum ResponseBytes {
    /// `HTTP/1.1 STATUS REASON`, the headers, a blank line and `body` (which must match any
    /// Content-Length in `headers`).
    static func encode(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer?, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 128 + (body?.readableBytes ?? 0))
        buffer.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        for (name, value) in headers {
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        if var body { buffer.writeBuffer(&body) }
        return buffer
    }
}
