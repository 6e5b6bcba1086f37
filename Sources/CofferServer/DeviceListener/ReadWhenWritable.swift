import NIOCore

/// Reads a connection only while its answers can be written: when the connection's unsent
/// answers pass the channel's high-water mark (the client does not read them), no more reads are
/// asked for until they fall below its low-water mark again.
///
/// The bound itself is ``DeviceHTTPHandler``'s: it answers nothing while the connection cannot
/// be written and closes it past ``DeviceHTTPHandler/maximumWaiting`` requests kept. A read in
/// flight still brings what it brings (SwiftNIO reads a few buffers per event), but holding the
/// next one keeps a client that pipelines and reads slowly from being read into that limit, and
/// leaves a connection where nothing moves to the idle timeout.
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
