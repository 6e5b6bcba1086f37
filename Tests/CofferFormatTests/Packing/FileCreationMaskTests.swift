import Foundation
import Testing
@testable import CofferFormat

@Suite("The umask, read without changing it")
struct FileCreationMaskTests {
    @Test("the Umask line of a status text is parsed as octal; a text without one gives nil")
    func parse() {
        let status = "Name:\tcoffer\nUmask:\t0027\nState:\tR (running)\n"
        #expect(FileCreationMask.parse(ArraySlice(status.utf8)) == 0o027)
        #expect(FileCreationMask.parse(ArraySlice("Name:\tx\nUmask:  0777\n".utf8)) == 0o777)
        #expect(FileCreationMask.parse(ArraySlice("Name:\tx\nState:\tR\n".utf8)) == nil)
        #expect(FileCreationMask.parse(ArraySlice("Name:\tx\nUmask:\t\n".utf8)) == nil)
        #expect(FileCreationMask.parse(ArraySlice("Name:\tx\nUmask:\t9".utf8)) == nil)
        #expect(FileCreationMask.parse(ArraySlice("Umask:\t0022\n".utf8)) == nil)  // the line follows another (Name) in every status file
    }

    #if os(Linux)
    @Test("on Linux the mask comes from /proc/self/status and equals the one umask(2) reports")
    func fromProc() throws {
        let fromProc = try #require(FileCreationMask.fromProcStatus())
        let mask = umask(0)
        umask(mask)
        #expect(fromProc == mask & 0o777)
        #expect(FileCreationMask.current == fromProc)
    }
    #endif
}
