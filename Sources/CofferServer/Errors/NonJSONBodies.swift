import Vapor

/// Refuses, with 415, a form or plain-text body sent to the JSON API.
///
/// Vapor decodes a route's input from whatever the Content-Type names, so a JSON route would also
/// take `application/x-www-form-urlencoded` (and act on it) or `text/plain` (and answer a confusing
/// 400): the API reads `application/json`, and the blob upload `application/octet-stream`, as
/// docs/openapi.json says. The dashboard, whose forms are URL-encoded, is left alone, and so is an
/// empty body (`curl -d ''` labels one as a form).
struct NonJSONBodies: Middleware {
    static let refused: [HTTPMediaType] = [.urlEncodedForm, .plainText]

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        // An unrouted request goes on to its 404 or 405.
        if request.route != nil, !Self.isDashboard(request.url.path), let refusal = Self.refusal(request.headers) {
            return request.eventLoop.makeFailedFuture(refusal)
        }
        return next.respond(to: request)
    }

    /// The 415 for a form or plain-text body; nil for any other (the device port asks too).
    static func refusal(_ headers: HTTPHeaders) -> Abort? {
        // The usual body of a device's report is labelled `application/json`: Vapor's parse of the
        // header into directives and a media type was 7 % of the device port's CPU under load.
        if let value = headers.first(name: .contentType), isPlainJSON(value) { return nil }
        guard let type = headers.contentType, isRefused(type), hasBody(headers) else { return nil }
        return Abort(.unsupportedMediaType, reason: "the API reads application/json bodies (blob uploads: application/octet-stream)")
    }

    /// Whether a Content-Type value is `application/json`, alone or before parameters (`;`), as
    /// senders spell it (lowercase). Any other spelling is left to Vapor's parser; no value this
    /// says yes to names a refused type.
    static func isPlainJSON(_ value: String) -> Bool {
        let json = "application/json".utf8
        let bytes = value.utf8
        guard bytes.starts(with: json) else { return false }
        guard let next = bytes.dropFirst(json.count).first else { return true }
        return next == UInt8(ascii: ";") || next == UInt8(ascii: " ") || next == UInt8(ascii: "\t")
    }

    /// Whether `type` is a form or plain text, in any case (media types are case-insensitive, and
    /// a browser sends `TEXT/PLAIN` cross-origin without asking first, as it does `text/plain`).
    static func isRefused(_ type: HTTPMediaType) -> Bool {
        refused.contains { $0.type == type.type.lowercased() && $0.subType == type.subType.lowercased() }
    }

    static func hasBody(_ headers: HTTPHeaders) -> Bool {
        if headers.contains(name: .transferEncoding) { return true }
        return headers.first(name: .contentLength).map { $0 != "0" } ?? false
    }

    static func isDashboard(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: true).first == Substring(Dashboard.prefix)
    }
}
