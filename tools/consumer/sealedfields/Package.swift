// swift-tools-version:6.1
// An app that adds the Coffer SDK and SealedFields as README.md shows: only the `SealedFields` trait, so
// GRDB joins swift-crypto and nothing of the server's does (tools/consumer/check.sh).
import PackageDescription

let package = Package(
    name: "ConsumerApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "Coffer", path: "../../..", traits: ["SealedFields"]),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(name: "ConsumerApp", dependencies: [
            .product(name: "Coffer", package: "Coffer"),
            .product(name: "SealedFields", package: "Coffer"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
    ]
)
