// swift-tools-version:6.1
// An app that adds the Coffer SDK as README.md shows, with no traits: CI resolves and builds it and
// checks that nothing but swift-crypto (and what it needs) entered the graph (tools/consumer/check.sh).
import PackageDescription

let package = Package(
    name: "ConsumerApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "Coffer", path: "../../..", traits: []),
    ],
    targets: [
        .executableTarget(name: "ConsumerApp", dependencies: [.product(name: "Coffer", package: "Coffer")]),
    ]
)
