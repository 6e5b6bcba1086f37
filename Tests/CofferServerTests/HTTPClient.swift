import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain HTTP calls over loopback with URLSession: the interface clients really use.
struct HTTP {
    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: Data

        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        var object: [String: Any] { (json as? [String: Any]) ?? [:] }
        var array: [[String: Any]] { (json as? [[String: Any]]) ?? [] }
        var errorCode: String? { object["error"] as? String }
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    let base: URL
    var token: String?

    func call(_ method: String, _ path: String, json: Any? = nil, body: Data? = nil,
              headers: [String: String] = [:], token overrideToken: String?? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        if let bearer = overrideToken ?? token { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
            request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        }
        // A connection per call: a kept-alive one may be closed by the server's idle timeout (1 s in
        // some tests) just as the next call is sent on it, which fails as "empty reply" under load.
        request.setValue("close", forHTTPHeaderField: "Connection")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response): (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: (data ?? Data(), response!)) }
            }.resume()
        }
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: headers, body: data)
    }
}
