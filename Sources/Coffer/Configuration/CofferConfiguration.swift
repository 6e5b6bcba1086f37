#if canImport(CryptoKit)
@preconcurrency import Crypto // CryptoKit's key types are Sendable only in Xcode 26's SDKs
#else
import Crypto
#endif
import Foundation

/// Everything a ``CofferClient`` needs: where the server is, who the app is, which key signs its
/// manifests, how the device describes itself, and where models are kept.
public struct CofferConfiguration: Sendable {
    /// The Coffer server, such as `https://models.example.com`.
    public var serverURL: URL
    /// The app's ID (`coffer app create` prints it).
    public var appID: String
    /// The app's device credential. Sent only to ``serverURL``, in a header or a request body,
    /// never in a URL.
    public var credential: String
    /// The server's manifest-signing public key, pinned in the app (`coffer-server public-key`).
    public var publicKey: Curve25519.Signing.PublicKey
    /// The ID of the team whose collections this app reads (`coffer team list` shows it), pinned:
    /// a manifest signed for any other team is refused, even one the server signed validly (one
    /// server signs for all its tenants). Nil: the team of the first manifest the cache accepts
    /// for a collection is trusted from then on (trust on first use). Compared without regard to case.
    public var teamID: String?
    /// How the device describes itself to targeting rules; detected by default.
    public var deviceAttributes: DeviceAttributes
    /// The device's ID, which places it in rollouts. Nil: a random ID made once and kept in the
    /// key store (stable until the app is reinstalled).
    public var deviceID: String?
    /// Where sealed models and the verified manifest are kept (created 0700).
    public var cacheDirectory: URL
    /// When to ask the server; see ``UpdatePolicy``.
    public var updatePolicy: UpdatePolicy
    /// Models served by name when nothing is cached and the server cannot be reached.
    public var bundledModels: [String: BundledModel]
    /// Where the device key and fetched model keys are kept: the Keychain on Apple platforms, a
    /// folder of 0600 files (`cacheDirectory/keys`) elsewhere.
    public var keyStore: any KeyStore
    /// The most bytes the cache may hold for one collection (its models plus an update being
    /// downloaded); an update that would exceed it is refused. Nil: no bound beyond the disk.
    public var maximumCacheBytes: UInt64?
    /// How long one request may wait for the server's next bytes (an idle timeout: an answer
    /// whose bytes keep coming, however slowly, does not reach it; see ``requestDeadline``).
    public var requestTimeout: TimeInterval
    /// The longest a manifest, key, report or attestation-challenge request may take from its start
    /// to the end of its answer, however its bytes trickle in (a server or CDN that sends one byte
    /// every few seconds never reaches ``requestTimeout``); past it the request is cancelled and
    /// fails as ``UnavailableCause/offline(_:)`` ("timed out: no complete answer within 60 s"),
    /// so the cache is served as when the server cannot be reached. Model downloads are not bound
    /// by it: they resume where they stopped. Default 60 s; more than 0, at most a day.
    public var requestDeadline: TimeInterval = 60
    /// How requests are sent; nil: URLSession (ephemeral, no cookies; the transport follows no
    /// redirect, the SDK follows one for model downloads only, without credentials). Linux apps
    /// may set `AsyncHTTPClientTransport` from the `CofferAsyncHTTPClient` product.
    public var transport: (any CofferTransport)?
    /// Model downloads that go on while the app is suspended (``BackgroundDownloads``); nil: models
    /// download over ``transport`` while the app runs.
    public var backgroundDownloads: BackgroundDownloads?
    /// How failed downloads are retried.
    public var retry: RetryPolicy
    /// Whether a plain `http://` ``serverURL`` to another machine is accepted. Off: the credential
    /// would cross the network unencrypted, so only `https://`, or `http://` to this machine
    /// (loopback), is accepted. Turn it on only for a closed test network. Model downloads from
    /// other addresses the manifest names may be `http://`: they carry no credential, and their
    /// bytes are checked against the signed manifest.
    public var allowsInsecureHTTP = false
    /// Proves key requests come from a genuine install, for apps whose attestation policy is not
    /// `none` (docs/ATTESTATION.md): ``AppAttestAttestor`` on Apple platforms, an app's own
    /// implementation on Android. Nil: key requests carry no evidence (policy `none`).
    public var attestor: (any DeviceAttestor)?
    /// Keeps the app running while an update holds the cache's lock (``BackgroundActivity``);
    /// tests set a double, since only Apple's platforms suspend apps.
    var backgroundActivity: any BackgroundActivity = SystemBackgroundActivity()
    /// The device's clock, which manifests' expiry and freshness are judged by (never earlier than
    /// the newest manifest verified: ``ManifestTime``); tests set one that was set back.
    var deviceClock: @Sendable () -> Date = { Date() }

    /// A configuration with the defaults: detected attributes, the platform's cache folder and key
    /// store, ``UpdatePolicy/useCachedAndUpdateInBackground``.
    public init(serverURL: URL, appID: String, credential: String, publicKey: Curve25519.Signing.PublicKey,
                cacheDirectory: URL? = nil, keyStore: (any KeyStore)? = nil) {
        self.serverURL = serverURL
        self.appID = appID
        self.credential = credential
        self.publicKey = publicKey
        self.deviceAttributes = .current
        self.deviceID = nil
        let cache = cacheDirectory ?? Self.defaultCacheDirectory
        self.cacheDirectory = cache
        self.updatePolicy = .useCachedAndUpdateInBackground
        self.bundledModels = [:]
        self.keyStore = keyStore ?? Self.platformKeyStore(cache: cache)
        self.maximumCacheBytes = nil
        self.requestTimeout = 30
        self.retry = RetryPolicy()
    }

    /// The same, with the public key as `coffer-server public-key` prints it (base64 of 32 bytes).
    public init(serverURL: URL, appID: String, credential: String, publicKey base64: String,
                cacheDirectory: URL? = nil, keyStore: (any KeyStore)? = nil) throws {
        self.init(serverURL: serverURL, appID: appID, credential: credential,
                  publicKey: try Self.publicKey(base64), cacheDirectory: cacheDirectory, keyStore: keyStore)
    }

    /// Parses a pinned public key: base64 of the raw 32-byte Ed25519 key.
    public static func publicKey(_ base64: String) throws -> Curve25519.Signing.PublicKey {
        guard let raw = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), raw.count == 32,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { throw CofferError.invalidConfiguration("the public key is not base64 of 32 bytes (coffer-server public-key prints it)") }
        return key
    }

    /// On Apple platforms ``StoragePlacement``'s folder (`Application Support/Coffer`, per bundle
    /// identifier for macOS apps outside the sandbox, `Caches/Coffer` on tvOS; kept out of
    /// backups), else `$XDG_CACHE_HOME/coffer` or `~/.cache/coffer`.
    public static var defaultCacheDirectory: URL {
        #if canImport(Darwin)
        return StoragePlacement.current.cacheDirectory
        #else
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("coffer", isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/coffer", isDirectory: true)
        #endif
    }

    /// The Keychain on Apple platforms (``StoragePlacement``'s service), else 0600 files in `cache/keys`.
    static func platformKeyStore(cache: URL) -> any KeyStore {
        #if canImport(Security)
        return KeychainKeyStore(service: StoragePlacement.current.keychainService)
        #else
        return FileKeyStore(directory: cache.appendingPathComponent("keys", isDirectory: true))
        #endif
    }

    /// Checks what can be checked before any request.
    func validate() throws {
        guard let scheme = serverURL.scheme?.lowercased(), scheme == "https" || scheme == "http", serverURL.host != nil else {
            throw CofferError.invalidConfiguration("the server URL must be http:// or https:// with a host")
        }
        if let refusal = PlainHTTPPolicy.refusal(serverURL, allowed: allowsInsecureHTTP) { throw CofferError.invalidConfiguration(refusal) }
        guard UUID(uuidString: appID) != nil else { throw CofferError.invalidConfiguration("the app ID is not a UUID") }
        guard !credential.isEmpty else { throw CofferError.invalidConfiguration("the credential is empty") }
        if let teamID, UUID(uuidString: teamID) == nil { throw CofferError.invalidConfiguration("the team ID is not a UUID") }
        if let deviceID, deviceID.isEmpty || deviceID.utf8.count > 200 || deviceID.contains("|") {
            throw CofferError.invalidConfiguration("a device ID is 1 to 200 bytes without '|'")
        }
        guard requestDeadline > 0, requestDeadline <= RequestDeadline.longest else {
            throw CofferError.invalidConfiguration("the request deadline must be more than 0 and at most 86400 seconds")
        }
    }
}
