import Logging
import NIOConcurrencyHelpers

/// The process's log: swift-log's `LoggingSystem`, bootstrapped once by `coffer-server` with the
/// level and format of its settings (LOG_LEVEL, `--log-level`; LOG_FORMAT, `--log-format`).
public enum ServerLogging {
    private static let bootstrapped = NIOLockedValueBox(false)

    /// Sends every logger of the process to standard error at the configuration's level and above,
    /// in its format; `quiet`: only critical lines, for a command whose output is its own (`check`).
    public static func bootstrap(_ configuration: ServerConfiguration, quiet: Bool = false) {
        bootstrap(level: quiet ? .critical : configuration.logLevel, format: configuration.logFormat)
    }

    /// Sends every logger of the process to standard error at `level` and above, as `format`.
    /// The first call wins (swift-log allows one bootstrap per process); later ones do nothing.
    public static func bootstrap(level: Logger.Level, format: LogFormat) {
        let first = bootstrapped.withLockedValue { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        LoggingSystem.bootstrap({ label, provider in
            LineLogHandler(label: label, format: format, level: level, metadataProvider: provider)
        }, metadataProvider: nil)
    }
}
