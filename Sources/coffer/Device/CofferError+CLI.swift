import Coffer

extension CLIFailure {
    /// An SDK error as a one-line failure with the exit code the CLI uses for its kind.
    init(_ error: CofferError) {
        switch error {
        case .keyFetchFailed: self.init(.unavailable, error.description)
        case .keyRefused(_, "attestation_required", _):
            // The CLI has neither App Attest nor an Android Keystore (docs/ATTESTATION.md).
            self.init(.permission, error.description + "; the coffer CLI cannot attest: use an app whose attestation policy is none")
        case .keyRefused: self.init(.permission, error.description)
        case .modelInvalid: self.init(.badData, error.description)
        case .invalidConfiguration: self.init(.usage, error.description)
        // Only the Keychain store says this; the CLI keeps its keys in files (SyncSettings.keyStore).
        case .keyStoreUnavailable: self.init(.tryAgain, error.description)
        case .collectionUnavailable(_, let cause): self.init(Self.status(of: cause), error.description)
        }
    }

    static func status(of cause: UnavailableCause) -> Status {
        switch cause {
        case .offline: return .unavailable
        case .server(let status, _, _):
            switch status {
            case 401, 403: return .permission
            case 404: return .noInput
            case 429: return .tryAgain
            case 400..<500: return .badData
            // A refused redirect of a model download (redirect_refused), or another 3xx where none belongs.
            case 300..<400: return .protocolError
            default: return .unavailable
            }
        case .manifestRefused, .modelRefused, .lastKnownGood: return .badData
        case .cache: return .ioError
        case .notCached: return .noInput
        case .cancelled: return .interrupted
        }
    }
}
