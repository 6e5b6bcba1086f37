// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
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
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.110.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.12.0"),
        .package(url: "https://github.com/vapor/leaf.git", from: "4.4.0"),
        .package(url: "https://github.com/vapor/leaf-kit.git", from: "1.10.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.8.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.28.0"),
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
            ]
        ),
        // The client SDK: model collections on devices. CofferFormat, Foundation and swift-crypto only.
        .target(
            name: "Coffer",
            dependencies: [
                "CofferFormat",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Reads model files (Core ML, ONNX, safetensors, GGUF) for what a person wants to see.
        // SwiftProtobuf and Foundation only; the protobuf code is generated once and committed
        // (tools/protos/generate.sh), never by a build plugin.
        .target(
            name: "ModelInspection",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["Generated/README.md"]
        ),
        // The command-line tool. Never imports Vapor or Fluent.
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferFormat", "Coffer", "CofferAsyncHTTPClient",
                "ModelInspection",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A CofferTransport over AsyncHTTPClient (SwiftNIO): larger body pieces than FoundationNetworking's.
        .target(
            name: "CofferAsyncHTTPClient",
            dependencies: [
                "Coffer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
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
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The Vapor application: accounts, apps, model keys, key delivery, blob storage.
        .target(
            name: "CofferServer",
            dependencies: [
                "CofferFormat",
                "CofferAttestation",
                "ModelInspection",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "Leaf", package: "leaf"),
                .product(name: "LeafKit", package: "leaf-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ],
            // The dashboard's Leaf templates and stylesheet, found through Bundle.module at run time.
            resources: [.copy("Dashboard/Resources")]
        ),
        // A thin executable over CofferServer.
        .executableTarget(
            name: "coffer-server",
            dependencies: [
                "CofferServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // libFuzzer harness over the container parser; see Fuzz/README.md.
        .executableTarget(
            name: "CofferFuzz",
            dependencies: [
                "CofferFormat", "ModelInspection", "CofferAttestation", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Fuzz/CofferFuzz"
        ),
        // Field-level encryption for GRDB records (app data at rest). GRDB and swift-crypto only.
        .target(
            name: "SealedFields",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The example app of docs/SEALEDFIELDS.md: `swift run sealed-items --help`.
        .executableTarget(
            name: "sealed-items",
            dependencies: ["SealedFields", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Examples/SealedItems",
            exclude: ["README.md"]
        ),
        // bench/sealedfields.sh: sealed against plain GRDB records in the same run.
        .executableTarget(
            name: "sealedfields-bench",
            dependencies: [
                "SealedFields", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "bench/SealedFieldsBench"
        ),
        .testTarget(
            name: "SealedFieldsTests",
            dependencies: ["SealedFields", "sealed-items", .product(name: "GRDB", package: "GRDB.swift")],
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
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/AttestationTestSupport"
        ),
        .testTarget(
            name: "CofferAttestationTests",
            dependencies: [
                "CofferAttestation", "CofferFormat", "AttestationTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            // Genuine device evidence (Fixtures/Android/README.md, Fixtures/Apple/README.md).
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "CofferFormatTests",
            dependencies: ["CofferFormat"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "CofferServerTests",
            dependencies: [
                "CofferServer", "CofferFormat", "coffer", "Coffer", "CofferAttestation", "AttestationTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "coffer", "coffer-server", "CofferFormat", "Coffer", "CofferAsyncHTTPClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
