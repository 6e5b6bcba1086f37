import FluentPostgresDriver
import Foundation

extension ServerConfiguration {
    /// The flags `coffer-server` has for settings, and the variable each one stands for.
    public static let flagVariables: KeyValuePairs<String, String> = [
        "--data-dir": "COFFER_DATA_DIR", "--hostname": "COFFER_HOSTNAME", "--port": "COFFER_PORT",
        "--device-port": "COFFER_DEVICE_PORT", "--grace-hours": "COFFER_BLOB_GRACE_HOURS",
        "--log-level": "LOG_LEVEL", "--log-format": "LOG_FORMAT",
    ]

    /// The defaults overridden by COFFER_* environment variables, then by `flags` (keyed by flag
    /// name, e.g. `["--port": "8081"]`; see ``flagVariables``).
    ///
    /// Strict: a value the setting does not accept throws, naming the flag or variable and what it
    /// accepts, before anything is written (docs/operations.md lists the rules). A variable set to
    /// the empty string counts as unset.
    ///
    /// - Throws: ``SettingError`` for the first setting (in the order below) that is not valid.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, flags: [String: String] = [:]
    ) throws(SettingError) -> ServerConfiguration {
        let settings = SettingSource(environment: environment, flags: flags)
        var configuration = ServerConfiguration()
        if let value = try settings.value("LOG_LEVEL", .logLevel) { configuration.logLevel = value }
        if let value = try settings.value("LOG_FORMAT", .logFormat) { configuration.logFormat = value }
        if let value = try settings.value("COFFER_DATA_DIR", .text) { configuration.dataDirectory = value }
        if let value = try settings.value("COFFER_HOSTNAME", .text) { configuration.hostname = value }
        if let value = try settings.value("COFFER_PORT", .port) { configuration.port = value }
        if let value = try settings.value("COFFER_DATABASE_URL", .postgresURL) { configuration.databaseURL = value }
        if let value = try settings.value("COFFER_MASTER_KEY", .masterKey) { configuration.masterKeyBase64 = value }
        if let value = try settings.value("COFFER_BOOTSTRAP_TOKEN", .bootstrapToken) { configuration.bootstrapToken = value }
        if let value = try settings.value("COFFER_BLOB_DIR", .text) { configuration.blobDirectory = value }
        if let location = try settings.value("COFFER_BLOB_STORE", .blobStore) {
            guard configuration.blobDirectory == nil else {
                throw SettingError(setting: "COFFER_BLOB_DIR", accepts: "unset when COFFER_BLOB_STORE names a bucket (blobs live in one place)")
            }
            configuration.objectStore = try ObjectStoreSettings.read(location, from: settings)
        } else {
            // They mean something only for a bucket: set alone, they are a mistake to point out.
            for variable in ["COFFER_S3_PRESIGN", "COFFER_S3_ADDRESSING", "COFFER_S3_UPLOAD_MEMORY"] where !(environment[variable] ?? "").isEmpty {
                throw SettingError(setting: variable, accepts: "unset without COFFER_BLOB_STORE (it applies to a bucket)")
            }
        }
        if let value = try settings.value("COFFER_MAX_BLOB_SIZE", .bytes) { configuration.maximumBlobSize = value }
        if configuration.objectStore != nil, configuration.maximumBlobSize > S3Upload.largestBlob {
            // A bucket takes a blob in at most 10,000 parts: refused at the start, not at part 10,001.
            throw SettingError(setting: "COFFER_MAX_BLOB_SIZE",
                               accepts: "at most \(S3Upload.largestBlob) bytes with COFFER_BLOB_STORE (10,000 parts of \(S3Upload.partSize) bytes)")
        }
        if let value = try settings.value("COFFER_BLOB_GRACE_HOURS", .duration("hours", of: 3600, zero: "remove at once")) {
            configuration.blobGracePeriod = value
        }
        if let value = try settings.value("COFFER_BLOB_COLLECT_MINUTES", .duration("minutes", of: 60, zero: "never")) {
            configuration.blobCollectionInterval = value
        }
        if let value = try settings.value("COFFER_MANIFEST_LIFETIME_HOURS", .duration("hours", of: 3600)) {
            configuration.manifestLifetime = value
        }
        if let value = try settings.value("COFFER_DEVICE_PORT", .port) { configuration.devicePort = value }
        if let value = try settings.value("COFFER_IDLE_TIMEOUT_SECONDS", .duration("seconds", of: 1, zero: "never")) {
            configuration.idleTimeout = value
        }
        if let value = try settings.value("COFFER_PUBLIC_URL", .publicURL) {
            configuration.publicURL = String(value.reversed().drop(while: { $0 == "/" }).reversed())
            configuration.secureCookies = value.lowercased().hasPrefix("https://")
        }
        if let value = try settings.value("COFFER_SECURE_COOKIES", .boolean) { configuration.secureCookies = value }
        if let value = try settings.value("COFFER_USAGE_FLUSH_SECONDS", .duration("seconds", of: 1)) {
            configuration.usageFlushInterval = value
        }
        if let value = try settings.value("COFFER_TRUSTED_PROXIES", .trustedProxies) { configuration.trustedProxies = value }
        if let value = try settings.value("COFFER_SESSION_HOURS", .duration("hours", of: 3600)) { configuration.sessionLifetime = value }
        if let value = try settings.value("COFFER_TEAM_QUOTA_BYTES", .bytes) { configuration.teamQuotaBytes = value }
        if let value = try settings.value("COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE", .count(atLeast: 1)) {
            configuration.deviceRequestsPerAddressPerMinute = value
        }
        if let value = try settings.value("COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE", .count(atLeast: 1)) {
            configuration.authFailuresPerAddressPerMinute = value
        }
        if let value = try settings.value("COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE", .count(atLeast: 1)) {
            configuration.blobMissesPerAddressPerMinute = value
        }
        if let value = try settings.value("COFFER_BLOB_STREAMS", .count(atLeast: 1)) { configuration.blobStreams = value }
        if let value = try settings.value("COFFER_BLOB_STREAMS_PER_ADDRESS", .count(atLeast: 1)) {
            configuration.blobStreamsPerAddress = value
        }
        if let value = try settings.value("COFFER_INVITATION_DAYS", .duration("days", of: 86_400, maximum: 365)) {
            configuration.invitationLifetime = value
        }
        if let value = try settings.value("COFFER_REPORT_FLUSH_SECONDS", .duration("seconds", of: 1)) {
            configuration.reportFlushInterval = value
        }
        if let value = try settings.value("COFFER_REPORT_BUFFER_ROWS", .count(atLeast: ReportBuffer.minimumCapacity, atMost: 10_000_000)) {
            configuration.reportBufferRows = value
        }
        if let value = try settings.value("COFFER_REPORT_RETENTION_DAYS", .duration("days", of: 86_400, maximum: 365)) {
            configuration.reportRetention = value
        }
        if let value = try settings.value("COFFER_ROLLOUT_CHECK_SECONDS", .duration("seconds", of: 1)) {
            configuration.rolloutCheckInterval = value
        }
        if let value = try settings.value("COFFER_REPORTS_PER_APP_PER_MINUTE", .count(atLeast: 1)) {
            configuration.reportsPerAppPerMinute = value
        }
        if let value = try settings.value("COFFER_REPORT_EVENTS_PER_DEVICE_PER_MINUTE", .count(atLeast: 1)) {
            configuration.reportEventsPerDevicePerMinute = value
        }
        if let value = try settings.value("COFFER_REPORT_DEVICES_PER_APP_PER_HOUR", .count(atLeast: 100)) {
            configuration.reportDevicesPerAppPerHour = value
        }
        if let value = try settings.value("COFFER_REPORT_FAILURES_PER_APP_PER_HOUR", .count(atLeast: 1)) {
            configuration.reportFailuresPerAppPerHour = value
        }
        return configuration
    }
}

/// Where a setting's text comes from: its flag when given, else its variable (COFFER_*, LOG_LEVEL, LOG_FORMAT).
struct SettingSource {
    let environment: [String: String]
    let flags: [String: String]

    /// The value of `variable` read by `rule`, nil when it is not set; throws naming the flag or
    /// variable the text came by.
    func value<Value>(_ variable: String, _ rule: SettingRule<Value>) throws(SettingError) -> Value? {
        let name: String, text: String
        if let flag = ServerConfiguration.flagVariables.first(where: { $0.value == variable })?.key, let given = flags[flag] {
            (name, text) = (flag, given)
        } else if let given = environment[variable], !given.isEmpty {
            (name, text) = (variable, given)
        } else {
            return nil
        }
        guard let value = rule.read(text) else { throw SettingError(setting: name, accepts: rule.accepts) }
        return value
    }
}

extension SettingRule where Value == String {
    /// A PostgreSQL URL the driver accepts.
    static var postgresURL: SettingRule {
        SettingRule(accepts: "a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE (optionally ?sslmode=require)") { text in
            guard !text.contains(where: \.isWhitespace), let url = URL(string: text),
                  (try? SQLPostgresConfiguration(url: url)) != nil
            else { return nil }
            return text
        }
    }

    /// The server's public address: http or https, a host, an optional path.
    static var publicURL: SettingRule {
        url(schemes: ["http", "https"], "an http:// or https:// URL with a host, such as https://models.example.com")
    }

    /// 32 bytes in base64.
    static var masterKey: SettingRule {
        SettingRule(accepts: "32 bytes in base64 (make one with: openssl rand -base64 32)") { text in
            (try? MasterKey(base64: text)) != nil ? text : nil
        }
    }

    /// A secret of at least 128 bits as ``SecretStrength`` estimates them.
    static var bootstrapToken: SettingRule {
        SettingRule(accepts: "a random token of at least 128 bits, not short or repetitive (make one with: openssl rand -base64 32)") { text in
            SecretStrength.estimatedBits(text) >= SecretStrength.minimumBits && !text.contains(where: \.isWhitespace) ? text : nil
        }
    }

    /// Addresses and CIDR ranges, as ``TrustedProxies`` reads them.
    static var trustedProxies: SettingRule {
        SettingRule(accepts: "IP addresses or CIDR ranges such as 10.0.0.0/8, separated by commas") { text in
            (try? TrustedProxies(parsing: text)) != nil ? text : nil
        }
    }
}
