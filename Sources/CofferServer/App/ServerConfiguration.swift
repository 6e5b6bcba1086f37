import Foundation
import NIOCore
import Vapor

/// Everything `coffer-server` needs to start, from flags and environment variables
/// (``fromEnvironment(_:flags:)``, which refuses a value it cannot use).
///
/// Defaults give a working single-process server: 127.0.0.1:8080, SQLite and blobs under
/// `./coffer-data`, a master key created in the data folder on first start.
public struct ServerConfiguration: Sendable {
    /// Where the SQLite database, blobs, master key and bootstrap token live.
    public var dataDirectory: String
    /// The address to listen on.
    public var hostname: String
    /// The port to listen on (0 picks a free one).
    public var port: Int
    /// `postgres://…` to use PostgreSQL instead of the embedded SQLite (several instances share it).
    public var databaseURL: String?
    /// The master key as base64 (COFFER_MASTER_KEY); if nil, `DATA_DIR/master.key` is used or created.
    public var masterKeyBase64: String?
    /// The first owner's token (COFFER_BOOTSTRAP_TOKEN); if nil one is generated into `DATA_DIR/bootstrap-token`.
    public var bootstrapToken: String?
    /// Where blobs are stored; defaults to `DATA_DIR/blobs` (point several instances at shared storage).
    public var blobDirectory: String?
    /// An S3-compatible bucket for the blobs instead of a folder (COFFER_BLOB_STORE and the AWS_*
    /// variables); nil: the folder.
    public var objectStore: ObjectStoreSettings?
    /// The largest blob accepted, in bytes.
    public var maximumBlobSize: Int64
    /// Key deliveries allowed per app per minute, and per device per minute.
    public var deliveriesPerAppPerMinute: Int
    /// Key deliveries allowed per device per minute.
    public var deliveriesPerDevicePerMinute: Int
    /// How long an unreferenced blob is kept after its last upload (COFFER_BLOB_GRACE_HOURS; default 7 days).
    public var blobGracePeriod: TimeInterval = 7 * 24 * 3600
    /// How often each instance collects unreferenced blobs (COFFER_BLOB_COLLECT_MINUTES; 0 = never; default hourly).
    public var blobCollectionInterval: TimeInterval = 3600

    /// How long a signed manifest is valid (COFFER_MANIFEST_LIFETIME_HOURS; default 7 days).
    public var manifestLifetime: TimeInterval = 7 * 24 * 3600
    /// The public address of this server or of a CDN in front of it (COFFER_PUBLIC_URL, e.g.
    /// `https://models.example.com`): manifests name blobs under it. If nil, blob URLs are paths
    /// (`/v1/blobs/…`) that devices resolve against the address they asked.
    public var publicURL: String?

    /// A second port for devices' manifest requests only (COFFER_DEVICE_PORT; `serve --device-port`),
    /// served by a lean SwiftNIO handler instead of Vapor's request path: several times the
    /// requests per second (docs/BENCHMARKS.md). nil: devices use the main port only.
    public var devicePort: Int?
    /// How long, in seconds, a connection to either port may stay idle — nothing read and nothing
    /// written — before the server closes it (COFFER_IDLE_TIMEOUT_SECONDS; default 75; 0 = never).
    /// A client that connects and sends nothing, or stops half-way through a request, holds a
    /// connection only this long. Behind a load balancer that keeps idle connections open, set it
    /// longer than the balancer's own idle timeout (often 60 seconds).
    public var idleTimeout: TimeInterval = 75

    /// Whether dashboard cookies carry `Secure` (COFFER_SECURE_COOKIES=1, or on when COFFER_PUBLIC_URL
    /// is `https://…`): set it whenever browsers reach the server over https, e.g. behind a proxy.
    public var secureCookies = false
    /// How long a dashboard sign-in lasts (COFFER_SESSION_HOURS; default 12 hours).
    public var sessionLifetime: TimeInterval = 12 * 3600
    /// Dashboard sign-in attempts allowed per client address, and per email address, per minute.
    public var signInAttemptsPerMinute = 10
    /// The reverse proxies and load balancers in front of the server whose `X-Forwarded-For` is
    /// believed (COFFER_TRUSTED_PROXIES: addresses or CIDR ranges, comma-separated). Without
    /// them every client behind a proxy has the proxy's address, and shares its sign-in limit.
    /// A malformed entry stops the server from starting. Default: none.
    public var trustedProxies: String?
    /// How often each instance adds its in-memory download and key-delivery counts to the
    /// database (COFFER_USAGE_FLUSH_SECONDS; default 60). They are also flushed at shutdown.
    public var usageFlushInterval: TimeInterval = 60

    /// The certificate authorities attestation evidence must chain to. nil, always outside tests:
    /// Apple's App Attestation Root CA and Google's hardware attestation roots, embedded. Tests
    /// set their own authority here; no setting or flag reaches it.
    var attestationRoots: DeviceAttestation.Roots?

    /// How long an upload's lease (its quota reservation, its hold against blob collection) lasts
    /// after it was taken or last renewed; renewed while the upload's body keeps arriving
    /// (``LeaseKeeper``). An hour, always outside tests: tests shorten it to see renewals without
    /// waiting an hour; no setting or flag reaches it.
    var uploadLeaseLifetime = UploadLeaseRecord.lifetime

    /// Seconds added to this process's clock where it is compared with the database's
    /// (``ClockSkew``). 0, always outside tests: tests set it to play an instance whose clock is
    /// wrong; no setting or flag reaches it.
    var clockOffset: TimeInterval = 0

    /// The Bcrypt pool's threads (``PasswordHashing``). A quarter of the cores, always outside
    /// tests: tests use one to fill the queue; no setting or flag reaches it.
    var passwordHashingThreads = PasswordHashing.defaultThreads
    /// The most hashes the Bcrypt pool takes, waiting or running (``PasswordHashing``). 32, always
    /// outside tests: tests make it small to fill it; no setting or flag reaches it.
    var passwordHashingPlaces = PasswordHashing.defaultPlaces

    /// The most bytes of blobs one team may store (COFFER_TEAM_QUOTA_BYTES, a whole number of bytes,
    /// at least 1). nil, the default: no limit.
    public var teamQuotaBytes: Int64?
    /// Requests to the device routes allowed per client address per minute
    /// (COFFER_DEVICE_REQUESTS_PER_ADDRESS_PER_MINUTE; at least 1; default 1200).
    public var deviceRequestsPerAddressPerMinute = 1200
    /// Failed authentications allowed per client address per minute, whatever the credential
    /// (COFFER_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE; at least 1; default 60).
    public var authFailuresPerAddressPerMinute = 60
    /// Blob requests (GET, HEAD) for addresses the store does not have, allowed per client address
    /// per minute (COFFER_BLOB_MISSES_PER_ADDRESS_PER_MINUTE; at least 1; default 600). Past it, a
    /// request for an address with no record in the database is answered 429 before the store is
    /// asked: with an object store each miss is a billed HEAD request on the pool every team shares.
    public var blobMissesPerAddressPerMinute = 600
    /// Blob bodies (`GET /v1/blobs/…` answered 200 or 206 with the bytes) this instance streams at
    /// once (COFFER_BLOB_STREAMS; at least 1). nil, the default: 1024 with a folder, 256 with a
    /// bucket, about 1 GiB of buffers either way (``StreamSlots``). Past it, 503 `downloads_busy`
    /// with `Retry-After`. HEAD answers and presigned redirects take none.
    public var blobStreams: Int?
    /// Of ``blobStreams``, how many one client address may have (COFFER_BLOB_STREAMS_PER_ADDRESS;
    /// at least 1; default 16: as many devices behind one NAT downloading in the same moment, each
    /// SDK downloading one blob at a time). Past it, 429 `too_many_downloads` with `Retry-After`.
    public var blobStreamsPerAddress = StreamSlots.perAddressDefault
    /// How often each instance writes the device reports it has accepted to the database
    /// (COFFER_REPORT_FLUSH_SECONDS; default 1). A crash loses at most this long's reports.
    public var reportFlushInterval: TimeInterval = 1
    /// The pause before a report flush that follows the last because rows are still waiting: on
    /// SQLite ``PeriodicWork/followUpPause`` (its one writer lets others in), on PostgreSQL none
    /// (the pause was idle time the backlog grew in: 503 at ~32 000 batches a second).
    var reportFlushFollowUpPause: TimeInterval { databaseURL == nil ? PeriodicWork.followUpPause : 0 }
    /// The most report rows (device outcome sets and failures) an instance keeps unwritten, as
    /// while the database is slow or down; past it, and past three quarters of it for a team that
    /// would hold more than a quarter, reports get 503 `reports_backlog` (COFFER_REPORT_BUFFER_ROWS;
    /// 1000 to 10 000 000; default 140 000).
    public var reportBufferRows = ReportBuffer.defaultCapacity
    /// How long raw failure reports (with their reasons) are kept
    /// (COFFER_REPORT_RETENTION_DAYS; above 0, at most 365; default 7). Counts per device stay.
    public var reportRetention: TimeInterval = 7 * 86_400
    /// How often each instance checks staged rollouts' gates and stage timers
    /// (COFFER_ROLLOUT_CHECK_SECONDS; default 10).
    public var rolloutCheckInterval: TimeInterval = 10
    /// Report batches allowed per app per minute on each instance (COFFER_REPORTS_PER_APP_PER_MINUTE;
    /// at least 1; default 6000).
    public var reportsPerAppPerMinute = 6000
    /// Report events allowed per device per minute on each instance
    /// (COFFER_REPORT_EVENTS_PER_DEVICE_PER_MINUTE; at least 1; default 120).
    public var reportEventsPerDevicePerMinute = 120
    /// Distinct (deployment, model, device) triples one app's reports may name per hour on each
    /// instance, a bucket that refills evenly (COFFER_REPORT_DEVICES_PER_APP_PER_HOUR; at least
    /// 100, a batch's most; default 500 000): device IDs are the app's choice, and each new one is
    /// a row kept for good. Size it for your fleet.
    public var reportDevicesPerAppPerHour = 500_000
    /// Failure events (with reasons) stored per app per clock hour on each instance
    /// (COFFER_REPORT_FAILURES_PER_APP_PER_HOUR; at least 1; default 100 000); past it failures
    /// still count on their devices.
    public var reportFailuresPerAppPerHour = 100_000
    /// How long a team invitation can be redeemed (COFFER_INVITATION_DAYS, in days: above 0, at
    /// most 365; default 7 days).
    public var invitationLifetime: TimeInterval = 7 * 86_400

    /// The least severe log events written (LOG_LEVEL, `--log-level`: trace, debug, info, notice,
    /// warning, error or critical, as in Vapor; default info). Migrations log at debug.
    public var logLevel: Logger.Level = .info
    /// How log lines are written (LOG_FORMAT, `--log-format`: text, the default, or json).
    public var logFormat: LogFormat = .text

    /// The defaults.
    public init(
        dataDirectory: String = "coffer-data",
        hostname: String = "127.0.0.1",
        port: Int = 8080,
        databaseURL: String? = nil,
        masterKeyBase64: String? = nil,
        bootstrapToken: String? = nil,
        blobDirectory: String? = nil,
        maximumBlobSize: Int64 = 16 << 30,
        deliveriesPerAppPerMinute: Int = 600,
        deliveriesPerDevicePerMinute: Int = 30
    ) {
        self.dataDirectory = dataDirectory
        self.hostname = hostname
        self.port = port
        self.databaseURL = databaseURL
        self.masterKeyBase64 = masterKeyBase64
        self.bootstrapToken = bootstrapToken
        self.blobDirectory = blobDirectory
        self.maximumBlobSize = maximumBlobSize
        self.deliveriesPerAppPerMinute = deliveriesPerAppPerMinute
        self.deliveriesPerDevicePerMinute = deliveriesPerDevicePerMinute
    }

    /// ``idleTimeout`` for SwiftNIO (nil when 0: never), at most about 30 years.
    var idleTimeAmount: TimeAmount? {
        idleTimeout > 0 ? .milliseconds(Int64(min(idleTimeout, 1e9) * 1000)) : nil
    }

    /// The blob folder in use.
    var resolvedBlobDirectory: String { blobDirectory ?? dataDirectory + "/blobs" }

    /// ``blobStreams``, or the default for the store in use.
    var resolvedBlobStreams: Int { blobStreams ?? (objectStore == nil ? StreamSlots.folderLimit : StreamSlots.bucketLimit) }
}
