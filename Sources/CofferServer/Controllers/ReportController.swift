import Vapor

/// `POST /v1/device/reports`: devices report what became of the models of a deployment
/// (docs/ROLLOUTS.md). The device authenticates as for manifests (HTTP Basic: app ID, credential).
/// The work is ``ReportEndpoint``'s, shared with the device listener; this route adds Vapor's body
/// collection (64 KiB, 413 beyond).
struct ReportController: RouteCollection {
    let endpoint: ReportEndpoint

    func boot(routes: any RoutesBuilder) throws {
        // Vapor refuses a streamed body that reaches maxSize: one byte more than the endpoint takes.
        routes.on(.POST, "v1", "device", "reports", body: .collect(maxSize: ByteCount(value: ReportEndpoint.maximumBody + 1)), use: receive)
    }

    /// Answers on the event loop when the app and the deployments are cached; otherwise goes to the
    /// database in a task.
    func receive(req: Request) -> EventLoopFuture<Response> {
        do {
            let body = req.body.data.map { Array($0.readableBytesView) } ?? []
            let request = try endpoint.parse(address: req.clientAddress, authorization: req.headers.first(name: .authorization), body: body)
            if let answer = try endpoint.cachedAnswer(request) {
                return req.eventLoop.makeSucceededFuture(Self.respond(answer))
            }
            return req.eventLoop.makeFutureWithTask { [endpoint] in
                Self.respond(try await endpoint.answer(request, on: req.db))
            }
        } catch {
            return req.eventLoop.makeFailedFuture(error)
        }
    }

    private static func respond(_ answer: ReportAnswer) -> Response {
        Response(status: .ok, headers: ReportAnswer.headers, body: .init(buffer: answer.body))
    }
}
