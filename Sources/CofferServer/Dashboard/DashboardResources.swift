import Foundation
import Leaf
import LeafKit
import Vapor

/// Where the dashboard's templates and stylesheet live: the CofferServer target's SwiftPM
/// resources (`Dashboard/Resources`), found through `Bundle.module`.
///
/// `Bundle.module` looks beside the executable first (`Coffer_CofferServer.resources`) and then in
/// the build folder, so `swift run coffer-server` and the built binary started from any directory
/// both find them: nothing depends on the working directory.
enum DashboardResources {
    /// The folder holding `Views/` and `Public/`.
    static var root: String {
        if let url = Bundle.module.url(forResource: "Resources", withExtension: nil) { return url.path }
        return Bundle.module.bundlePath + "/Resources"
    }

    /// Points Leaf at the bundled `Views/` folder, sandboxed to it. Leaf's default limits refuse
    /// paths with hidden folders, and a build's resources live under `.build/`: the sandbox and
    /// the `.leaf` extension are the limits that matter here.
    static func configureLeaf(_ app: Application) {
        let views = root + "/Views/"
        app.leaf.configuration = LeafConfiguration(rootDirectory: views)
        app.leaf.sources = .singleSource(NIOLeafFiles(
            fileio: app.fileio, limits: [.toSandbox, .requireExtensions, .onlyLeafExtensions],
            sandboxDirectory: views, viewDirectory: views))
        app.views.use(.leaf)
    }

    /// The stylesheet, read once at start (it is small and never changes while the server runs).
    static func stylesheet() throws -> ByteBuffer { try publicFile("dashboard.css") }

    /// A file of `Public/` (the stylesheet, scripts), read whole.
    static func publicFile(_ name: String) throws -> ByteBuffer {
        let path = root + "/Public/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Abort(.internalServerError, reason: "the dashboard file \(name) is missing")
        }
        return ByteBuffer(data: data)
    }
}
