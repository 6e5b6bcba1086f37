// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CofferFormat", targets: ["CofferFormat"]),
        .library(name: "Coffer", targets: ["Coffer"]),
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
        // The command-line tool. Never imports Vapor or Fluent.
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferFormat", "Coffer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The Vapor application: accounts, apps, model keys, key delivery, blob storage.
        .target(
            name: "CofferServer",
            dependencies: [
                "CofferFormat",
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
            dependencies: ["CofferFormat", .product(name: "Crypto", package: "swift-crypto")],
            path: "Fuzz/CofferFuzz"
        ),
        .testTarget(
            name: "CofferFormatTests",
            dependencies: ["CofferFormat"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "CofferServerTests",
            dependencies: [
                "CofferServer", "CofferFormat", "coffer",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "coffer", "coffer-server", "CofferFormat", "Coffer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
