import Testing
@testable import CofferFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rule for secret files judged on `stat`s made up here, for accounts other than the one the
/// tests run as (root's file read by another account cannot be made on disk without root): every
/// refusal's line names a fix that works when followed.
@Suite("Secret files: each refusal says a fix that works")
struct SecretFileProblemTests {
    static let me: uid_t = 1000, other: uid_t = 1001

    /// A regular file's `stat` with `owner` and permission bits `mode`.
    static func file(owner: uid_t, mode: mode_t) -> stat {
        var info = stat()
        info.st_uid = owner
        info.st_mode = S_IFREG | mode
        return info
    }

    @Test("root's file others may read, read by another account, is to be chowned to it and made 0600 (chmod 600 alone leaves it unreadable there); this account's own, or root's read by root, is to be made 0600")
    func rootsFileReadByAnotherAccount() {
        let roots = Self.file(owner: 0, mode: 0o644)
        let problem = SecretFileProblem.of(roots, account: Self.me)
        #expect(problem == .rootsAndOpen(mode: "644"))
        #expect(problem?.line("the master key file", "/data/master.key")
                == "the master key file /data/master.key belongs to root and may be read or written by others (mode 644); chown it to this account and chmod 600 it")
        #expect(SecretFileProblem.of(roots, account: 0) == .open(mode: "644"))
        #expect(SecretFileProblem.of(Self.file(owner: Self.me, mode: 0o640), account: Self.me) == .open(mode: "640"))
        #expect(SecretFileProblem.of(Self.file(owner: 0, mode: 0o600), account: Self.me) == nil)
        #expect(SecretFileProblem.of(Self.file(owner: Self.me, mode: 0o400), account: Self.me) == nil)
    }

    @Test("another account's file, whatever its mode, is to be chowned to this account and made 0600")
    func anotherAccountsFile() {
        for mode in [0o600, 0o644] as [mode_t] {
            let problem = SecretFileProblem.of(Self.file(owner: Self.other, mode: mode), account: Self.me)
            #expect(problem == .notYours)
            let line = problem?.line("passphrase file", "/home/me/pass") ?? ""
            #expect(line.contains("/home/me/pass") && line.contains("chown it to this account") && line.contains("chmod 600"), "\(line)")
        }
    }

    @Test("a file this account could not open: another account's, root's too, is to be chowned to it; its own without the owner's read (0200, made under umask 477) is to be made 0600; one whose owner and mode do not explain it is not judged")
    func unopenable() {
        #expect(SecretFileProblem(unopenable: Self.file(owner: Self.other, mode: 0o600), account: Self.me) == .notYours)
        #expect(SecretFileProblem(unopenable: Self.file(owner: 0, mode: 0o600), account: Self.me) == .notYours)
        let own = SecretFileProblem(unopenable: Self.file(owner: Self.me, mode: 0o200), account: Self.me)
        #expect(own == .unreadable(mode: "200"))
        #expect(own?.line("the pending master key file", "/data/master.key.next")
                == "the pending master key file /data/master.key.next cannot be read by this account (mode 200); chmod 600 it")
        #expect(SecretFileProblem(unopenable: Self.file(owner: Self.me, mode: 0o600), account: Self.me) == nil)
    }
}
