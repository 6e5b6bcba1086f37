// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Coffer",
    // What the SDK's code needs on Apple platforms: key delivery's HPKE is CryptoKit's there, from
    // iOS 17, macOS 14, tvOS 17, watchOS 10 and visionOS 1 (docs/SDK.md, "Apple platforms").
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "CofferFormat", targets: ["CofferFormat"]),
        .library(name: "Coffer", targets: ["Coffer"]),
        // The SDK's AsyncHTTPClient transport, for Linux apps and the CLI; iOS apps do not need it.
        .library(name: "CofferAsyncHTTPClient", targets: ["CofferAsyncHTTPClient"]),
        .library(name: "SealedFields", targets: ["SealedFields"]),
        .library(name: "ModelInspection", targets: ["ModelInspection"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "coffer-server", targets: ["coffer-server"]),
    ],
    // Package traits (SE-0450) keep the server's, the CLI's and the optional libraries' packages out of an
    // app's graph: an app that depends on `Coffer` with `traits: []` resolves swift-crypto and nothing else.
    // The defaults build everything this repository holds (`swift run coffer-server`, `swift test`).
    traits: [
        .trait(
            name: "Server",
            description: "The coffer-server executable and CofferServer: Vapor, Fluent and its SQLite and PostgreSQL drivers, Leaf, swift-prometheus, SwiftNIO, swift-certificates (attestation).",
            enabledTraits: ["CLI"]
        ),
        .trait(
            name: "CLI",
            description: "The coffer command-line tool: swift-argument-parser, with ModelInspection and the AsyncHTTPClient transport.",
            enabledTraits: ["ModelInspection", "AsyncHTTPClient"]
        ),
        .trait(name: "ModelInspection", description: "The ModelInspection library: swift-protobuf."),
        .trait(name: "AsyncHTTPClient", description: "The CofferAsyncHTTPClient transport for Linux apps: async-http-client and SwiftNIO."),
        .trait(name: "SealedFields", description: "The SealedFields library: GRDB."),
        .default(enabledTraits: ["Server", "SealedFields"]),
    ],
    // Floors are the versions this repository is tested with.
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.13.0"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/leaf.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/leaf-kit.git", from: "1.14.3"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // The sealed container, model keys and legacy formats. swift-crypto only.
        .target(
            name: "CofferFormat",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            // Apple's privacy manifest: the file-metadata calls (stat, fstat) and why.
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // The client SDK: model collections on devices. CofferFormat, Foundation and swift-crypto only.
        .target(
            name: "Coffer",
            dependencies: [
                "CofferFormat",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // Reads model files (Core ML, ONNX, safetensors, GGUF) for what a person wants to see.
        // SwiftProtobuf and Foundation only; the protobuf code is generated once and committed
        // (tools/protos/generate.sh), never by a build plugin.
        .target(
            name: "ModelInspection",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf", condition: .when(traits: ["ModelInspection"])),
            ],
            exclude: ["Generated/README.md"]
        ),
        // The command-line tool. Never imports Vapor or Fluent.
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferFormat", "Coffer", "CofferAsyncHTTPClient", "ModelInspection",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A CofferTransport over AsyncHTTPClient (SwiftNIO): larger body pieces than FoundationNetworking's.
        .target(
            name: "CofferAsyncHTTPClient",
            dependencies: [
                "Coffer",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOFoundationCompat", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
            ]
        ),
        // Checks App Attest and Android key attestation evidence (docs/ATTESTATION.md): X.509 through
        // swift-certificates, the extensions through swift-asn1, a small bounded CBOR reader of its own.
        // Server side only: the SDK and the CLI never link it.
        .target(
            name: "CofferAttestation",
            dependencies: [
                "CofferFormat",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates", condition: .when(traits: ["Server"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: .when(traits: ["Server"])),
            ]
        ),
        // An S3 client for the server's blob store (issue 20): AWS Signature Version 4 written here over
        // swift-crypto, requests and streamed bodies through AsyncHTTPClient, a small bounded XML reader.
        // Server side only: the SDK and the CLI never link it.
        .target(
            name: "CofferS3",
            dependencies: [
                "CofferFormat", // Hex, the package's one hex encoder
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([
                ("AsyncHTTPClient", "async-http-client"),
                ("NIOConcurrencyHelpers", "swift-nio"),
                ("NIOCore", "swift-nio"),
                ("NIOHTTP1", "swift-nio"),
                ("NIOPosix", "swift-nio"), // NIOConnectionError, to say why a store cannot be reached
            ])
        ),
        // The Vapor application: accounts, apps, model keys, key delivery, blob storage.
        .target(
            name: "CofferServer",
            dependencies: [
                "CofferFormat",
                "CofferAttestation",
                "CofferS3",
                "ModelInspection",
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([
                ("X509", "swift-certificates"),
                ("Vapor", "vapor"),
                ("Fluent", "fluent"),
                ("AsyncKit", "async-kit"),
                ("SQLKit", "sql-kit"),
                ("Leaf", "leaf"),
                ("LeafKit", "leaf-kit"),
                ("FluentSQLiteDriver", "fluent-sqlite-driver"),
                ("FluentPostgresDriver", "fluent-postgres-driver"),
                ("Prometheus", "swift-prometheus"),
                ("Metrics", "swift-metrics"),
                ("Logging", "swift-log"),
                ("_NIOFileSystem", "swift-nio"),
                ("NIOCore", "swift-nio"),
                ("NIOConcurrencyHelpers", "swift-nio"),
                ("NIOHTTP1", "swift-nio"),
                ("NIOPosix", "swift-nio"),
                ("NIOExtras", "swift-nio-extras"),
                ("AsyncHTTPClient", "async-http-client"),
            ]),
            // The dashboard's Leaf templates and stylesheet, found through Bundle.module at run time.
            resources: [.copy("Dashboard/Resources")]
        ),
        // A thin executable over CofferServer.
        .executableTarget(
            name: "coffer-server",
            dependencies: [
                "CofferServer",
                "CofferFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])),
            ]
        ),
        // libFuzzer harness over the container parser; see Fuzz/README.md.
        .executableTarget(
            name: "CofferFuzz",
            dependencies: [
                "CofferFormat", "ModelInspection", "CofferAttestation", .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([("X509", "swift-certificates"), ("SwiftASN1", "swift-asn1")]),
            path: "Fuzz/CofferFuzz"
        ),
        // Field-level encryption for GRDB records (app data at rest). GRDB and swift-crypto only.
        .target(
            name: "SealedFields",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["SealedFields"])),
                // SQLite's C API, for reading sealed values in place (BorrowedValue).
                .product(name: "GRDBSQLite", package: "GRDB.swift", condition: .when(traits: ["SealedFields"])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The example app of docs/SEALEDFIELDS.md: `swift run sealed-items --help`.
        .executableTarget(
            name: "sealed-items",
            dependencies: [
                "SealedFields", .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["SealedFields"])),
            ],
            path: "Examples/SealedItems",
            exclude: ["README.md"]
        ),
        // bench/sealedfields.sh: sealed against plain GRDB records in the same run.
        .executableTarget(
            name: "sealedfields-bench",
            dependencies: [
                "SealedFields", .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["SealedFields"])),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "bench/SealedFieldsBench"
        ),
        .testTarget(
            name: "SealedFieldsTests",
            dependencies: [
                "SealedFields", "sealed-items", "BlockingTestSupport",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["SealedFields"])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            exclude: ["Reference"]
        ),
        .testTarget(
            name: "ModelInspectionTests",
            dependencies: ["ModelInspection"],
            resources: [.copy("Fixtures")]
        ),
        // Test certificate authorities that issue Apple and Android attestation evidence: for the
        // tests only (never linked by the server, whose trusted roots are Apple's and Google's).
        .target(
            name: "AttestationTestSupport",
            dependencies: [
                "CofferAttestation",
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([("X509", "swift-certificates"), ("SwiftASN1", "swift-asn1")]),
            path: "Tests/AttestationTestSupport"
        ),
        // offThePool: blocking waits in tests (child processes, pipes) on threads of their own, off the
        // cooperative pool every test's task shares.
        .target(name: "BlockingTestSupport", path: "Tests/BlockingTestSupport"),
        // The test S3 gateway (COFFER_TEST_S3_ENDPOINT, a Ceph RADOS Gateway .ci/rgw-start.sh starts):
        // buckets for the server's and the CLI's "both stores" tests.
        .target(
            name: "S3TestSupport",
            dependencies: ["CofferS3", "BlockingTestSupport"] + serverProducts([("AsyncHTTPClient", "async-http-client")]),
            path: "Tests/S3TestSupport"
        ),
        .testTarget(
            name: "CofferAttestationTests",
            dependencies: [
                "CofferAttestation", "CofferFormat", "AttestationTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([("X509", "swift-certificates"), ("SwiftASN1", "swift-asn1")]),
            // Genuine device evidence (Fixtures/Android/README.md, Fixtures/Apple/README.md).
            resources: [.copy("Fixtures")]
        ),
        // The signer against AWS's published vectors, the XML reader under mutation, and the client
        // against a real Ceph RADOS Gateway when COFFER_TEST_S3_ENDPOINT is set (.ci/rgw-start.sh).
        .testTarget(
            name: "CofferS3Tests",
            dependencies: [
                "CofferS3", "BlockingTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([
                ("AsyncHTTPClient", "async-http-client"),
                ("NIOConcurrencyHelpers", "swift-nio"),
                ("NIOCore", "swift-nio"),
                ("NIOHTTP1", "swift-nio"),
                ("NIOPosix", "swift-nio"),
            ])
        ),
        .testTarget(
            name: "CofferFormatTests",
            dependencies: [
                "CofferFormat", "BlockingTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "CofferServerTests",
            dependencies: [
                "CofferServer", "CofferFormat", "coffer", "Coffer", "CofferAttestation", "AttestationTestSupport", "CofferS3", "S3TestSupport", "BlockingTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ] + serverProducts([
                ("X509", "swift-certificates"),
                ("Vapor", "vapor"),
                ("Fluent", "fluent"),
                ("AsyncKit", "async-kit"),
                ("SQLKit", "sql-kit"),
                ("FluentSQLiteDriver", "fluent-sqlite-driver"),
                ("FluentPostgresDriver", "fluent-postgres-driver"),
                ("NIOCore", "swift-nio"),
                ("NIOConcurrencyHelpers", "swift-nio"),
                ("NIOPosix", "swift-nio"),
                ("NIOEmbedded", "swift-nio"),
            ])
        ),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "coffer", "coffer-server", "CofferFormat", "Coffer", "CofferAsyncHTTPClient", "S3TestSupport", "BlockingTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// The server side's package products, each present only with the `Server` trait, so that none of
/// their packages enters the graph of an app that leaves the trait off.
func serverProducts(_ products: [(name: String, package: String)]) -> [Target.Dependency] {
    products.map { .product(name: $0.name, package: $0.package, condition: .when(traits: ["Server"])) }
}
