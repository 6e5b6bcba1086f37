import NIOCore

/// Reads a connection only while its answers can be written: when the connection's unsent
/// answers pass the channel's high-water mark (the client does not read them), no more requests
/// are read until they fall below its low-water mark again.
///
/// Without it, a client that sends small requests without ever reading the answers (30 bytes of
/// `GET` each, answered with a few hundred) makes the server queue answers in memory without
/// bound: every answer that needs no database is written at once, the connection is never idle,
/// and a few such connections take the process's memory — for every team. With it, such a
/// connection costs the kernel's socket buffers and the high-water mark, and, once nothing moves,
/// the idle timeout closes it.
final class ReadWhenWritable: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A read was asked for while the connection could not be written: made once it can.
    private var readPending = false

    func read(context: ChannelHandlerContext) {
        guard context.channel.isWritable else {
            readPending = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, readPending {
            readPending = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }
}
