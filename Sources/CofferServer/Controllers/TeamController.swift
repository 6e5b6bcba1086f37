import Fluent
import Vapor

/// `/v1/teams`: create a team (the creator becomes its owner) and list the caller's teams.
struct TeamController: RouteCollection {
    struct CreateTeam: Content { let name: String }
    struct TeamView: Content { let id: UUID; let name: String; let role: Role }

    func boot(routes: any RoutesBuilder) throws {
        let teams = routes.grouped("v1", "teams")
        teams.post(use: create)
        teams.get(use: list)
    }

    func create(req: Request) async throws -> Response {
        let user = try req.user()
        let body = try req.content.decode(CreateTeam.self)
        let team = try await Self.create(name: body.name, owner: user, on: req.db)
        return try await TeamView(id: team.requireID(), name: team.name, role: .owner).encodeResponse(status: .created, for: req)
    }

    /// Creates team `name` with `owner` as its owner, audited; the API's and the dashboard's way.
    static func create(name: String, owner user: AuthenticatedUser, on db: any Database) async throws -> TeamRecord {
        try Names.validate(name, what: "team name")
        guard try await TeamRecord.query(on: db).filter(\.$name == name).first() == nil else {
            throw APIError.conflict("team \(name) already exists")
        }
        let team = TeamRecord(name: name)
        // Two creations can pass the check above together: the unique name constraint decides.
        try await UniqueViolation.asConflict("team \(name) already exists") {
            try await db.transaction { db in
                try await team.create(on: db)
                try await MembershipRecord(teamID: team.requireID(), userID: user.userID, role: .owner).create(on: db)
                try await Audit.record(on: db, teamID: team.id, action: "team.create", actor: user.name, target: name, outcome: "ok")
            }
        }
        return team
    }

    func list(req: Request) async throws -> [TeamView] {
        let user = try req.user()
        let memberships = try await MembershipRecord.query(on: req.db)
            .filter(\.$user.$id == user.userID).with(\.$team).all()
        return try memberships.map { TeamView(id: try $0.team.requireID(), name: $0.team.name, role: $0.role) }
            .sorted { $0.name < $1.name }
    }
}

/// Rules for names people choose (teams, users, apps, keys).
enum Names {
    /// The most bytes a name may take: 100 characters of 4 bytes. Counted in characters alone, one
    /// letter carrying thousands of combining marks is one character (a megabyte-long name in
    /// every page, audit row and index entry that shows it).
    static let maximumBytes = 400

    static func validate(_ name: String, what: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_. @+".unicodeScalars.contains($0)
        }
        guard name.utf8.count <= maximumBytes, (1...100).contains(name.count), allowed, !name.hasPrefix(" "), !name.hasSuffix(" "), name != ".", name != ".." else {
            throw APIError.invalid("\(what) must be 1 to 100 letters, digits, spaces or - _ . @ +")
        }
    }
}
