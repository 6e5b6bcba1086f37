import Foundation

/// Where the SDK keeps its files and keys by default on an Apple platform, and how: a pure choice,
/// so every platform's answer is tested on every platform (docs/SDK.md, "Apple platforms").
///
/// - iOS, watchOS, visionOS and sandboxed macOS apps have a container of their own:
///   `Application Support/Coffer`, Keychain service `coffer`.
/// - macOS apps outside the sandbox share the user's folders and login keychain, so the bundle
///   identifier separates them: `Application Support/<bundle ID>/Coffer`, service
///   `coffer.<bundle ID>` (a command-line tool without one keeps `Coffer` and `coffer`).
/// - tvOS gives apps no persistent storage beyond small amounts: `Caches/Coffer`, which the
///   system may purge (models are then downloaded again).
///
/// The cache is always excluded from backups: models are gigabytes the server can send again,
/// sealed with keys a restored device must fetch anyway. On the platforms with data protection
/// classes its folders are `completeUntilFirstUserAuthentication`, whatever the app's default
/// class: they hold only sealed bytes, and an app whose default is `complete` could otherwise not
/// update (nor move a finished background download in) while the device is locked.
struct StoragePlacement: Equatable, Sendable {
    /// The Apple platforms the SDK builds for.
    enum Platform: Sendable { case iOS, macOS, tvOS, watchOS, visionOS }

    /// The system folder the cache sits in.
    enum Base: Equatable, Sendable { case applicationSupport, caches }

    let base: Base
    /// The folders under ``base``, outermost first.
    let folders: [String]
    /// Whether the cache root is marked `isExcludedFromBackup`.
    let excludedFromBackup: Bool
    /// Whether the cache's folders are given the data protection class
    /// `completeUntilFirstUserAuthentication` (the platforms that have classes; not macOS).
    let readableAfterFirstUnlock: Bool
    /// The default Keychain service of ``KeychainKeyStore``.
    let keychainService: String

    /// The placement for an app on `platform`; `bundleIdentifier` is the main bundle's, `sandboxed`
    /// whether a macOS app runs in the App Sandbox (its own container).
    static func choose(for platform: Platform, bundleIdentifier: String?, sandboxed: Bool) -> StoragePlacement {
        let separate = platform == .macOS && !sandboxed ? usable(bundleIdentifier) : nil
        return StoragePlacement(
            base: platform == .tvOS ? .caches : .applicationSupport,
            folders: (separate.map { [$0] } ?? []) + ["Coffer"],
            excludedFromBackup: true,
            readableAfterFirstUnlock: platform != .macOS,
            keychainService: KeychainQuery.defaultService(bundleIdentifier: separate))
    }

    /// A bundle identifier that can name a folder: not empty, no `/`, not `.` or `..`.
    private static func usable(_ identifier: String?) -> String? {
        guard let identifier, !identifier.isEmpty, !identifier.contains("/"), identifier != ".", identifier != ".." else { return nil }
        return identifier
    }

    /// Makes `path` one of the SDK's private folders (0700) for sealed bytes: the cache's and the
    /// background staging folder. Where there are data protection classes it is
    /// `completeUntilFirstUserAuthentication`, so files made in it can be written while locked.
    static func makeSealedFolder(_ path: String) throws {
        try FileKeyStore.makePrivateFolder(path)
        #if canImport(Darwin)
        if current.readableAfterFirstUnlock { protectUntilFirstUnlock(path) }
        #endif
    }

    #if canImport(Darwin)
    /// The platform this build runs on.
    static var currentPlatform: Platform {
        #if targetEnvironment(macCatalyst)
        return .macOS // a Catalyst app outside the sandbox shares the user's folders like any Mac app
        #elseif os(iOS)
        return .iOS
        #elseif os(tvOS)
        return .tvOS
        #elseif os(watchOS)
        return .watchOS
        #elseif os(visionOS)
        return .visionOS
        #else
        return .macOS
        #endif
    }

    /// The placement of the running app.
    static var current: StoragePlacement {
        choose(for: currentPlatform, bundleIdentifier: Bundle.main.bundleIdentifier,
               sandboxed: ProcessInfo.processInfo.environment["APP_SANDBOX_CONTAINER_ID"] != nil)
    }

    /// The default cache folder of the running app.
    var cacheDirectory: URL {
        let directory: FileManager.SearchPathDirectory = base == .caches ? .cachesDirectory : .applicationSupportDirectory
        var url = FileManager.default.urls(for: directory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        for folder in folders { url.appendPathComponent(folder, isDirectory: true) }
        return url
    }

    /// Marks `root` (the cache folder) as excluded from backups, with everything in it; a failure
    /// leaves it included, which costs backup space and nothing else.
    static func excludeFromBackup(_ root: URL) {
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var url = root
        try? url.setResourceValues(values)
    }

    /// Gives `folder` the protection class `completeUntilFirstUserAuthentication`, which files
    /// made in it afterwards take too; a failure leaves the app's default class.
    static func protectUntilFirstUnlock(_ folder: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes([.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: folder)
        #endif
    }
    #endif
}
