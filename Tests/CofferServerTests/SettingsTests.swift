import Foundation
import Testing

@testable import CofferServer

/// Every COFFER_* variable and coffer-server flag is read strictly: a value the setting does not
/// accept is refused, naming the setting, and never replaced by a default.
@Suite("Settings")
struct SettingsTests {
    /// Values each setting must refuse.
    static let bad: [(String, [String])] = [
        ("COFFER_DATA_DIR", []),
        ("COFFER_HOSTNAME", []),
        ("COFFER_PORT", ["80a", "-1", "65536", "+80", " 80", "80 ", "0x50", "8e3", "99999999999999999999999", "1.5"]),
        ("COFFER_DEVICE_PORT", ["80a", "-1", "65536", "70000", "port"]),
        ("COFFER_DATABASE_URL", ["postgres", "mysql://u:p@h/db", "postgres://", "postgres://u:p@/db", "http://u@h/db", "postgres://u@h/db?sslmode=bogus", "postgres://u@h /db"]),
        ("COFFER_PUBLIC_URL", ["models.example.com", "ftp://models.example.com", "https://", "https://u:p@h", "https://h/?q=1", "https://h/#x", "https:// h"]),
        ("COFFER_MASTER_KEY", ["short", "AAAA", Data(count: 31).base64EncodedString(), Data(count: 33).base64EncodedString()]),
        ("COFFER_BOOTSTRAP_TOKEN", ["admin", "cft_" + String(repeating: "a", count: 200), String(repeating: "abc123", count: 30), "correct horse battery staple",
                                    "cft_0123456789abcdef0123456789abcdef", "a" + String(repeating: "b", count: 300) + "1234"]),
        ("COFFER_MAX_BLOB_SIZE", ["0", "-1", "16G", "1e9", "9223372036854775808", "nan"]),
        ("COFFER_BLOB_GRACE_HOURS", ["-1", "nan", "inf", "infinity", "1e3", "1e400", "two", "1.2.3", ".", "876001"]),
        ("COFFER_BLOB_COLLECT_MINUTES", ["-5", "NaN", "soon", "+1"]),
        ("COFFER_MANIFEST_LIFETIME_HOURS", ["0", "-1", "inf", "0.0", String(repeating: "9", count: 400)]),
        ("COFFER_IDLE_TIMEOUT_SECONDS", ["-1", "soon", "inf", "75s"]),
        ("COFFER_SECURE_COOKIES", ["2", "on", "maybe", "y", "TRUE!"]),
        ("COFFER_USAGE_FLUSH_SECONDS", ["0", "-60", "nan"]),
        ("COFFER_TRUSTED_PROXIES", ["10.0.0.0/33", "proxy.local", "10.0.0.1,,x"]),
        ("COFFER_SESSION_HOURS", ["0", "-12", "inf"]),
        ("COFFER_TEAM_QUOTA_BYTES", ["0", "-1", "1GB", "unlimited", "1.5"]),
        ("COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE", ["0", "-1", "many", "2147483648"]),
        ("COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE", ["0", "-60", "1e2"]),
        ("COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE", ["0", "-1", "many", "2147483648"]),
        ("COFFER_BLOB_STREAMS", ["0", "-1", "1k", "2147483648"]),
        ("COFFER_BLOB_STREAMS_PER_ADDRESS", ["0", "-16", "16.5", "all"]),
        ("COFFER_REPORT_DEVICES_PER_APP_PER_HOUR", ["0", "99", "-1", "2147483648", "lots"]),
        ("COFFER_REPORT_FAILURES_PER_APP_PER_HOUR", ["0", "1.5"]),
        ("COFFER_REPORT_BUFFER_ROWS", ["0", "999", "10000001", "1e5", "lots"]),
        ("COFFER_INVITATION_DAYS", ["0", "-7", "366", "365.5", "nan", "inf", "week"]),
    ]

    @Test("a value a setting does not accept is refused with one line naming the setting, never its value",
          arguments: bad.flatMap { setting, values in values.map { (setting, $0) } })
    func refused(setting: String, value: String) {
        #expect {
            try ServerConfiguration.fromEnvironment([setting: value])
        } throws: { error in
            guard let error = error as? SettingError else { return false }
            let line = error.description
            return error.setting == setting && line.hasPrefix(setting + " must be ") && !line.contains("\n")
                && (!line.contains(value) || error.accepts.contains(value))
        }
    }

    @Test("valid values are read, and an empty variable counts as unset")
    func accepted() throws {
        let configuration = try ServerConfiguration.fromEnvironment([
            "COFFER_PORT": "0", "COFFER_DEVICE_PORT": "65535", "COFFER_MAX_BLOB_SIZE": "9223372036854775807",
            "COFFER_BLOB_GRACE_HOURS": "0", "COFFER_BLOB_COLLECT_MINUTES": "0.5", "COFFER_MANIFEST_LIFETIME_HOURS": "1.5",
            "COFFER_IDLE_TIMEOUT_SECONDS": "0", "COFFER_SECURE_COOKIES": "Yes", "COFFER_USAGE_FLUSH_SECONDS": "5",
            "COFFER_PUBLIC_URL": "https://models.example.com/cdn/", "COFFER_DATABASE_URL": "postgres://coffer:secret@db:5432/coffer?sslmode=require",
            "COFFER_MASTER_KEY": Data(count: 32).base64EncodedString(), "COFFER_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8",
            "COFFER_SESSION_HOURS": "12", "COFFER_TEAM_QUOTA_BYTES": "1073741824",
            "COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE": "1", "COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE": "30",
            "COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE": "25", "COFFER_BLOB_STREAMS": "4096", "COFFER_BLOB_STREAMS_PER_ADDRESS": "64",
            "COFFER_INVITATION_DAYS": "365", "COFFER_HOSTNAME": "",
            "COFFER_REPORT_DEVICES_PER_APP_PER_HOUR": "100", "COFFER_REPORT_FAILURES_PER_APP_PER_HOUR": "2147483647",
            "COFFER_REPORT_BUFFER_ROWS": "10000000", "COFFER_BOOTSTRAP_TOKEN": Secrets.make(prefix: "cft_"),
        ])
        #expect(configuration.port == 0 && configuration.devicePort == 65535 && configuration.hostname == "127.0.0.1")
        #expect(configuration.maximumBlobSize == .max && configuration.blobGracePeriod == 0 && configuration.blobCollectionInterval == 30)
        #expect(configuration.manifestLifetime == 5400 && configuration.idleTimeout == 0 && configuration.usageFlushInterval == 5)
        #expect(configuration.secureCookies && configuration.publicURL == "https://models.example.com/cdn")
        #expect(configuration.teamQuotaBytes == 1 << 30 && configuration.deviceRequestsPerAddressPerMinute == 1)
        #expect(configuration.authFailuresPerAddressPerMinute == 30 && configuration.invitationLifetime == 365 * 86_400)
        #expect(configuration.reportDevicesPerAppPerHour == 100 && configuration.reportFailuresPerAppPerHour == 2_147_483_647)
        #expect(configuration.reportBufferRows == 10_000_000 && configuration.blobMissesPerAddressPerMinute == 25)
        #expect(configuration.resolvedBlobStreams == 4096 && configuration.blobStreamsPerAddress == 64)

        let defaults = try ServerConfiguration.fromEnvironment([:])
        #expect(defaults.teamQuotaBytes == nil && defaults.deviceRequestsPerAddressPerMinute == 1200)
        #expect(defaults.authFailuresPerAddressPerMinute == 60 && defaults.invitationLifetime == 7 * 86_400)
        #expect(defaults.reportDevicesPerAppPerHour == 500_000 && defaults.reportFailuresPerAppPerHour == 100_000)
        #expect(defaults.reportBufferRows == 140_000 && defaults.blobMissesPerAddressPerMinute == 600)
        #expect(defaults.resolvedBlobStreams == 1024 && defaults.blobStreamsPerAddress == 16)
    }

    @Test("a flag is read by its variable's rule and named in the refusal; it wins over the variable")
    func flags() throws {
        #expect(try ServerConfiguration.fromEnvironment(["COFFER_PORT": "80a"], flags: ["--port": "8081"]).port == 8081)
        #expect(throws: SettingError(setting: "--port", accepts: "a whole number from 0 to 65535")) {
            try ServerConfiguration.fromEnvironment(["COFFER_PORT": "8081"], flags: ["--port": "70000"])
        }
        #expect(throws: SettingError.self) { try ServerConfiguration.fromEnvironment([:], flags: ["--data-dir": ""]) }
        #expect(throws: SettingError.self) { try ServerConfiguration.fromEnvironment([:], flags: ["--grace-hours": "-1"]) }
        #expect(throws: SettingError.self) { try ServerConfiguration.fromEnvironment([:], flags: ["--device-port": "x"]) }
    }

    @Test("the bootstrap token estimate refuses weak tokens and passes generated ones")
    func bootstrapTokenStrength() {
        for _ in 0..<200 {
            #expect(SecretStrength.estimatedBits(Secrets.make(prefix: "cft_")) >= 128)
            let hex = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined()
            #expect(SecretStrength.estimatedBits(hex) >= 128, "openssl rand -hex 32")
        }
        #expect(SecretStrength.estimatedBits("cft_test_" + UUID().uuidString) >= 128)
        for weak in ["", "a", "password", String(repeating: "x", count: 1000), String(repeating: "Passw0rd!", count: 40),
                     "abcdefghijklmnopqrstuvwxyz", String((0..<200).map { Character(Unicode.Scalar(UInt8(33 + $0 % 90))) })] {
            #expect(SecretStrength.estimatedBits(weak) < 128, "\(weak.prefix(20))")
        }
        #expect(SecretStrength.period(Array("abcabcab".unicodeScalars)) == 3)
        #expect(SecretStrength.period(Array("abcd".unicodeScalars)) == 4)
    }
}
