// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CofferFormat", targets: ["CofferFormat"]),
        .executable(name: "coffer", targets: ["coffer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
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
        // The command-line tool. Never imports Vapor or Fluent.
        .executableTarget(
            name: "coffer",
            dependencies: [
                "CofferFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // libFuzzer harness over the container parser; see Fuzz/README.md.
        .executableTarget(
            name: "CofferFuzz",
            dependencies: ["CofferFormat"],
            path: "Fuzz/CofferFuzz"
        ),
        .testTarget(
            name: "CofferFormatTests",
            dependencies: ["CofferFormat"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "coffer", "CofferFormat",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
