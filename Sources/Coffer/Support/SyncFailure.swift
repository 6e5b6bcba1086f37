/// Why an update stopped; becomes the ``UnavailableCause`` a caller sees.
enum SyncFailure: Error, Sendable {
    case server(ServerFailure)
    case manifestRefused(String)
    case modelRefused(name: String, reason: String)
    case lastKnownGood(name: String, reason: String)
    case cache(String)
    case cancelled

    var cause: UnavailableCause {
        switch self {
        case .server(let failure): return failure.cause
        case .manifestRefused(let reason): return .manifestRefused(reason)
        case .modelRefused(let name, let reason): return .modelRefused(name: name, reason: reason)
        case .lastKnownGood(let name, let reason): return .lastKnownGood(name: name, reason: reason)
        case .cache(let reason): return .cache(reason)
        case .cancelled: return .cancelled
        }
    }

    /// Whether trying the same request again may help.
    var isTransient: Bool {
        if case .server(let failure) = self { return failure.isTransient }
        return false
    }
}
