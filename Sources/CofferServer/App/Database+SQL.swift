import Fluent
import SQLKit

extension Database {
    /// This database as SQLKit's (SQLite and PostgreSQL both are); 500 for one that is not.
    func sql() throws -> any SQLDatabase {
        guard let sql = self as? any SQLDatabase else { throw APIError(.internalServerError, "internal", "the database does not speak SQL") }
        return sql
    }
}
