import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A browser for the dashboard, in the tests: keeps the dashboard's cookies itself, follows no
/// redirect (the tests read each 303), and reads the CSRF token from the last page's forms.
final class Browser: @unchecked Sendable {
    let base: URL
    private(set) var cookies: [String: String] = [:]
    /// The `csrf` field of the last page that had one.
    private(set) var csrf = ""
    /// Sent with every request (e.g. `X-Forwarded-For`, as a proxy in front would add it).
    var headers: [String: String] = [:]
    /// The `Cookie` header this browser sends (empty without cookies).
    var cookieHeader: String { cookies.filter { !$0.value.isEmpty }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
    private let session: URLSession

    init(base: URL) {
        self.base = base
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    func get(_ path: String) async throws -> HTTP.Reply {
        try await send("GET", path, body: nil)
    }

    /// Posts a form with this browser's CSRF token (unless `csrf` is given: nil leaves it out).
    func post(_ path: String, _ fields: [String: String], csrf token: String?? = .none) async throws -> HTTP.Reply {
        var fields = fields
        switch token {
        case .none: fields["csrf"] = csrf
        case .some(.none): break
        case .some(.some(let value)): fields["csrf"] = value
        }
        var components = URLComponents()
        components.queryItems = fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return try await send("POST", path, body: Data(body.utf8))
    }

    /// Posts `body` as it is, with `contentType` and `headers` (the dashboard script's uploads, and
    /// hand-made multipart forms).
    func postRaw(_ path: String, body: Data, contentType: String, headers: [String: String] = [:]) async throws -> HTTP.Reply {
        try await send("POST", path, body: body, contentType: contentType, headers: headers)
    }

    /// Posts a `multipart/form-data` form: `fields` first (with this browser's CSRF token unless it
    /// is given), then `file` as the `model` part, as a browser sends the upload form.
    func postMultipart(_ path: String, fields: [String: String] = [:], file: Data?, csrf token: String?? = .none) async throws -> HTTP.Reply {
        let boundary = "----coffer\(UUID().uuidString)"
        var fields = fields
        switch token {
        case .none: fields["csrf"] = csrf
        case .some(.none): break
        case .some(.some(let value)): fields["csrf"] = value
        }
        var body = Data()
        let ordered = fields.filter { $0.key == "csrf" } + fields.filter { $0.key != "csrf" }.sorted { $0.key < $1.key }
        for (name, value) in ordered {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        if let file {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"model\"; filename=\"m.coffer\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            body += file + Data("\r\n".utf8)
        }
        body += Data("--\(boundary)--\r\n".utf8)
        return try await postRaw(path, body: body, contentType: "multipart/form-data; boundary=\(boundary)")
    }

    /// Signs in with the sign-in form; returns the reply to the POST.
    @discardableResult
    func signIn(_ email: String, _ password: String) async throws -> HTTP.Reply {
        _ = try await get("/dashboard/sign-in")
        let reply = try await post("/dashboard/sign-in", ["email": email, "password": password])
        _ = try await get("/dashboard")
        return reply
    }

    /// Chooses email and password with an API token on the welcome page, which signs in.
    @discardableResult
    func welcome(token: String, email: String, password: String) async throws -> HTTP.Reply {
        _ = try await get("/dashboard/welcome")
        let reply = try await post("/dashboard/welcome", ["token": token, "email": email, "password": password])
        _ = try await get("/dashboard")
        return reply
    }

    /// Presents `value` as cookie `name` from now on.
    func setCookie(_ name: String, _ value: String) { cookies[name] = value }

    private func send(_ method: String, _ path: String, body: Data?, contentType: String = "application/x-www-form-urlencoded",
                      headers: [String: String] = [:]) async throws -> HTTP.Reply {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in self.headers.merging(headers, uniquingKeysWith: { $1 }) { request.setValue(value, forHTTPHeaderField: name) }
        if !cookieHeader.isEmpty { request.setValue(cookieHeader, forHTTPHeaderField: "Cookie") }
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: (data ?? Data(), response!)) }
            }.resume()
        }
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        let reply = HTTP.Reply(status: http.statusCode, headers: headers, body: data)
        if let setCookie = reply.header("Set-Cookie") {
            // Each cookie by its exact name (several may come joined by commas): `coffer_session=`
            // is also the tail of `__Host-coffer_session=`.
            for name in ["coffer_session", "coffer_csrf", "coffer_known", "__Host-coffer_session", "__Host-coffer_csrf", "__Host-coffer_known"] {
                for range in setCookie.ranges(of: name + "=") {
                    let before = setCookie[..<range.lowerBound].last { $0 != " " }
                    guard before == nil || before == "," else { continue }
                    cookies[name] = String(setCookie[range.upperBound...].prefix { $0 != ";" && $0 != "," })
                }
            }
        }
        if let token = Self.csrf(in: reply.html) { csrf = token }
        return reply
    }

    /// The value of the first `csrf` hidden field of a page.
    static func csrf(in html: String) -> String? {
        guard let start = html.range(of: "name=\"csrf\" value=\"") else { return nil }
        let value = html[start.upperBound...].prefix { $0 != "\"" }
        return value.isEmpty ? nil : String(value)
    }
}

extension HTTP.Reply {
    /// The whole body as text (a page).
    var html: String { String(decoding: body, as: UTF8.self) }
    /// Where a 303 sends the browser.
    var location: String? { header("Location") }
}

/// Hands every redirect back to the caller instead of following it.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
