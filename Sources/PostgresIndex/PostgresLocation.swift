import Foundation

/// Where an index on PostgreSQL lives: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or `postgresql://`).
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// The role's password, if the server asks for one.
    public var password: String?
    /// The database.
    public var database: String

    /// Whether a location names PostgreSQL rather than an index file.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads a location URL.
    public init(_ given: String) throws(PostgresIndexError) {
        // Errors repeat the location for the person at the terminal (and in JSON output): never its password.
        let text = Self.redacted(given)
        guard Self.isPostgres(text) else { throw .invalidLocation(text, reason: "it does not start with postgres://") }
        guard let components = URLComponents(string: given) else { throw .invalidLocation(text, reason: "it is not a URL") }
        guard let host = components.host, !host.isEmpty else { throw .invalidLocation(text, reason: "it names no host") }
        guard let user = components.user, !user.isEmpty else { throw .invalidLocation(text, reason: "it names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw .invalidLocation(text, reason: "it names no database") }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw .invalidLocation(text, reason: "the port is out of range") }
        self.host = host
        self.port = port
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        // PostgreSQL's startup message ends each name at a NUL: a control character would cut or change it.
        for (name, value) in [("user", self.user), ("database", self.database), ("host", self.host), ("password", self.password ?? "")]
            where value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidLocation(text, reason: "its \(name) holds a control character")
        }
    }

    /// `text` with any password between `//user:` and `@` left out.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let authority = text[scheme.upperBound..<(text[scheme.upperBound...].firstIndex(of: "/") ?? text.endIndex)]
        // The last @ ends the user information: a password may hold an unencoded @ of its own.
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + String(text[at...])
    }

    /// The location without its password, for messages and `status`.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
