import NIOCore
import NIOHTTP1

/// The answer to an accepted report batch, `{"accepted":N,"duplicates":M}`, as the bytes both
/// ports send (``ReportEndpoint``).
///
/// A batch has at most ``ReportBatch/maximumEvents`` events, so every answer where one of the two
/// counts is 0 (a new batch, a retried one) is made once here, body and whole keep-alive response
/// (``ResponseBytes``); a mixed batch's is written when it happens.
struct ReportAnswer: Sendable, Equatable {
    let accepted: Int
    let duplicates: Int

    static let headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]

    /// The JSON body.
    var body: ByteBuffer {
        if let made = Self.made(self) { return made.body }
        return Self.encodeBody(self)
    }

    /// The whole HTTP/1.1 200 response, for a keep-alive connection of the device listener.
    var response: ByteBuffer {
        if let made = Self.made(self) { return made.response }
        return Self.encodeResponse(body: Self.encodeBody(self))
    }

    private static func made(_ answer: ReportAnswer) -> (body: ByteBuffer, response: ByteBuffer)? {
        if answer.duplicates == 0, answer.accepted >= 0, answer.accepted < newBatches.count { return newBatches[answer.accepted] }
        if answer.accepted == 0, answer.duplicates >= 0, answer.duplicates < retriedBatches.count { return retriedBatches[answer.duplicates] }
        return nil
    }

    private static let newBatches = (0...ReportBatch.maximumEvents).map { make(ReportAnswer(accepted: $0, duplicates: 0)) }
    private static let retriedBatches = (0...ReportBatch.maximumEvents).map { make(ReportAnswer(accepted: 0, duplicates: $0)) }

    private static func make(_ answer: ReportAnswer) -> (body: ByteBuffer, response: ByteBuffer) {
        let body = encodeBody(answer)
        return (body, encodeResponse(body: body))
    }

    private static func encodeBody(_ answer: ReportAnswer) -> ByteBuffer {
        ByteBuffer(string: "{\"accepted\":\(answer.accepted),\"duplicates\":\(answer.duplicates)}")
    }

    private static func encodeResponse(body: ByteBuffer) -> ByteBuffer {
        var headers = Self.headers
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        return ResponseBytes.encode(status: .ok, headers: headers, body: body, allocator: ByteBufferAllocator())
    }
}
