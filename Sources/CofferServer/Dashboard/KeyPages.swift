import CofferFormat
import Fluent
import Vapor

/// `/dashboard/teams/TEAM/keys`: the team's model keys, creating one, revoking one.
///
/// Creating answers with the `.modelkey` file itself as a download (`Content-Disposition:
/// attachment`, `Cache-Control: no-store`), made by the API's own code
/// (``KeyController/make(name:in:actor:on:)``, the format of `coffer key create`). The key is
/// never put into a page and never logged; the browser keeps the only copy. A small script
/// (`keys.js`) shows the list again once the download has begun: it sends a random ticket with the
/// form, and the download's answer sets the cookie ``ticketCookie`` + ticket (the answer's headers
/// arrive as the download starts; leaving the page before would cancel the only download). Without
/// the script the page says to reload.
struct KeyPages: RouteCollection {
    struct Row: Encodable, Sendable {
        let id: String
        let name: String
        let created: String
        let revoked: String
        let live: Bool
        let revokePath: String
    }
    struct Page: Encodable, Sendable {
        let chrome: Chrome
        let tabs: TeamTabs
        let team: String
        let canChange: Bool
        let action: String
        let keys: [Row]
        let name: String
        let created: Bool
        let error: String?
    }

    let keys: KeyController
    let secureCookies: Bool

    /// The start of the name of the cookie that tells `keys.js` the download has begun; the ticket
    /// ends it, so two pages creating keys at once do not take each other's. Not a secret: the page chose it.
    static let ticketCookie = "coffer_download_"

    func boot(routes: any RoutesBuilder) throws {
        let team = routes.grouped("dashboard", "teams", ":team", "keys")
        team.get(use: show)
        team.on(.POST, body: .collect(maxSize: "16kb"), use: create)
        team.on(.POST, ":key", "revoke", body: .collect(maxSize: "16kb"), use: revoke)
    }

    func show(req: Request) async throws -> Response {
        try await page(req, name: "", created: req.query[String.self, at: "created"] == "1", error: nil)
    }

    func create(req: Request) async throws -> Response {
        let (team, _) = try await req.team(requiring: .developer)
        let fields = FormFields(request: req)
        let name = try fields.text("name", label: "The key name", limit: 100)
        let ticket = try fields.text("ticket", label: "The download ticket", limit: 64)
        let key: ModelKey
        do {
            key = try await keys.make(name: name, in: team, actor: try req.user().name, on: req.db)
        } catch let error as APIError where error.status != .forbidden {
            return try await page(req, name: name, created: false, error: DashboardErrorMiddleware.sentence(error.reason), status: error.status)
        }
        let response = Self.download(key)
        // 32 lowercase hex digits, as keys.js makes it; anything else is ignored.
        if ticket.utf8.count == 32, ticket.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            response.cookies[Self.ticketCookie + ticket] = HTTPCookies.Value(string: "1", expires: nil, maxAge: 120, domain: nil, path: "/dashboard",
                                                                    isSecure: secureCookies, isHTTPOnly: false, sameSite: .strict)
        }
        return response
    }

    func revoke(req: Request) async throws -> Response {
        let team = try req.parameters.require("team")
        // The API's revoke finds a key by ID in any team; here it must be a key of the page's team.
        let (record, _) = try await req.team(requiring: .developer)
        guard let id = req.parameters.get("key"),
              try await KeyRecord.query(on: req.db).filter(\.$id == id).filter(\.$team.$id == record.requireID()).first() != nil
        else { throw APIError.notFound("key") }
        _ = try await keys.revoke(req: req)
        return req.seeOther(TeamTabs.path(team, "keys"))
    }

    /// The `.modelkey` file as a download that no cache keeps.
    static func download(_ key: ModelKey) -> Response {
        let response = Response(status: .ok)
        response.headers.contentType = .json
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.headers.replaceOrAdd(name: .contentDisposition, value: attachment(key.name + ".modelkey"))
        response.body = .init(data: key.fileRepresentation())
        return response
    }

    /// `attachment; filename="…"; filename*=UTF-8''…`: an ASCII name for old browsers, the exact
    /// name (percent-encoded) for the others. Key names have no quotes or slashes (``Names``).
    static func attachment(_ filename: String) -> String {
        let ascii = String(filename.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 ? Character($0) : "_" })
        let encoded = filename.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ascii
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    private func page(_ req: Request, name: String, created: Bool, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        let (team, role) = try await req.team(requiring: .viewer)
        let canChange = role >= .developer
        let rows = try await keys.list(req: req).reversed().map { key in
            Row(id: key.id, name: key.name, created: CollectionPage.date(key.createdAt), revoked: CollectionPage.date(key.revokedAt), live: key.revokedAt == nil,
                revokePath: TeamTabs.path(team.name, "keys") + "/" + CollectionPages.escape(key.id) + "/revoke")
        }
        return try await req.page("keys", Page(
            chrome: try Chrome.make(req, title: "Keys · \(team.name)", section: "team"), tabs: TeamTabs(team: team.name, current: "keys"),
            team: team.name, canChange: canChange, action: TeamTabs.path(team.name, "keys"), keys: rows, name: name,
            created: created, error: error), status: status)
    }
}
