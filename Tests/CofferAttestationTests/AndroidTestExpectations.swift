import CofferAttestation
import XCTest

/// Asserts that `body` throws an ``AttestationFailure`` with `code` whose one-line detail contains `fragment`.
func assertAndroidFailure(
    _ code: AttestationFailure.Code,
    _ fragment: String,
    file: StaticString = #filePath,
    line: UInt = #line,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        XCTFail("expected \(code.rawValue): …\(fragment)…, got success", file: file, line: line)
    } catch let failure as AttestationFailure {
        XCTAssertEqual(failure.code, code, failure.detail, file: file, line: line)
        XCTAssertTrue(failure.detail.contains(fragment), "detail was: \(failure.detail)", file: file, line: line)
        XCTAssertFalse(failure.detail.contains("\n"), "detail spans lines: \(failure.detail)", file: file, line: line)
    } catch {
        XCTFail("expected AttestationFailure, got \(error)", file: file, line: line)
    }
}

/// The synchronous form of ``assertAndroidFailure(_:_:file:line:_:)``.
func assertAndroidFailureSync(
    _ code: AttestationFailure.Code,
    _ fragment: String,
    file: StaticString = #filePath,
    line: UInt = #line,
    _ body: () throws -> Void
) {
    do {
        try body()
        XCTFail("expected \(code.rawValue): …\(fragment)…, got success", file: file, line: line)
    } catch let failure as AttestationFailure {
        XCTAssertEqual(failure.code, code, failure.detail, file: file, line: line)
        XCTAssertTrue(failure.detail.contains(fragment), "detail was: \(failure.detail)", file: file, line: line)
        XCTAssertFalse(failure.detail.contains("\n"), "detail spans lines: \(failure.detail)", file: file, line: line)
    } catch {
        XCTFail("expected AttestationFailure, got \(error)", file: file, line: line)
    }
}
