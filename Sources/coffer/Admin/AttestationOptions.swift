import ArgumentParser

/// `--attestation POLICY` and its details, for `coffer app create` and `coffer app update`.
struct AttestationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("none, apple-app-attest or android-key-attestation: what a device must prove before it gets a model key (docs/ATTESTATION.md).",
                               valueName: "POLICY"))
    var attestation: String?

    @Option(help: ArgumentHelp("apple-app-attest: the Apple Developer Team ID.", valueName: "TEAM_ID"))
    var appleTeamID: String?

    @Option(help: ArgumentHelp("apple-app-attest: the bundle ID (default: the app's --bundle-id).", valueName: "ID"))
    var appleBundleID: String?

    @Option(help: ArgumentHelp("apple-app-attest: production (default) or development.", valueName: "ENV"))
    var appleEnvironment: String?

    @Option(help: ArgumentHelp("android-key-attestation: the package name.", valueName: "NAME"))
    var androidPackage: String?

    @Option(help: ArgumentHelp("android-key-attestation: the SHA-256 of a signing certificate the app may be signed with (hex, colons allowed); repeat for several.",
                               valueName: "SHA256"))
    var androidSigningDigest: [String] = []

    @Option(help: ArgumentHelp("android-key-attestation: software, tee (default) or strongbox.", valueName: "LEVEL"))
    var androidSecurityLevel: String?

    @Flag(help: ArgumentHelp("android-key-attestation: also accept devices with an unlocked bootloader or an unverified boot (their system writes the app's identity: any app could claim to be yours)."))
    var androidAllowUnlockedDevices = false

    /// The policy to send, or nil when `--attestation` is absent. A detail given for another
    /// policy (or without one) is refused here, before anything is sent.
    func policy() throws -> API.Attestation? {
        let apple = appleTeamID != nil || appleBundleID != nil || appleEnvironment != nil
        let android = androidPackage != nil || !androidSigningDigest.isEmpty || androidSecurityLevel != nil || androidAllowUnlockedDevices
        guard let attestation else {
            if apple || android { throw CLIFailure(.usage, "--apple-* and --android-* options need --attestation") }
            return nil
        }
        switch attestation {
        case "none":
            if apple || android { throw CLIFailure(.usage, "--attestation none takes no --apple-* or --android-* options") }
            return API.Attestation(policy: "none")
        case "apple-app-attest":
            if android { throw CLIFailure(.usage, "--android-* options are for --attestation android-key-attestation") }
            guard appleTeamID != nil else { throw CLIFailure(.usage, "--attestation apple-app-attest needs --apple-team-id") }
            return API.Attestation(policy: attestation, appleTeamID: appleTeamID, bundleID: appleBundleID, appleEnvironment: appleEnvironment)
        case "android-key-attestation":
            if apple { throw CLIFailure(.usage, "--apple-* options are for --attestation apple-app-attest") }
            guard androidPackage != nil, !androidSigningDigest.isEmpty else {
                throw CLIFailure(.usage, "--attestation android-key-attestation needs --android-package and --android-signing-digest")
            }
            return API.Attestation(policy: attestation, packageName: androidPackage, signingCertificateDigests: androidSigningDigest,
                                   minimumSecurityLevel: androidSecurityLevel, allowUnlockedDevices: androidAllowUnlockedDevices ? true : nil)
        default:
            throw CLIFailure(.usage, "--attestation must be none, apple-app-attest or android-key-attestation")
        }
    }
}
