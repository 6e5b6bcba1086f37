/// The `<Error>` document S3 answers failures with; only its `Code` is kept (the message and the
/// other fields may echo the string to sign and are never shown).
struct S3ErrorBody: Equatable {
    /// `NoSuchBucket`, `SignatureDoesNotMatch`, …
    let code: String

    /// The code of an `<Error>` document; nil for any other body (empty, not XML, another root),
    /// and for a code that is not a short run of letters and digits.
    init?(_ bytes: [UInt8]) {
        guard let root = try? XMLReader.parse(bytes), root.name == "Error", let code = root.text(of: "Code"),
              (1...64).contains(code.utf8.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        self.code = code
    }
}
