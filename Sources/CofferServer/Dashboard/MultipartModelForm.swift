import Vapor

/// Reads the model upload form of a browser without JavaScript (`multipart/form-data`) while it
/// streams in (``MultipartStream``): small text fields (`csrf` first, as the form orders them) and
/// one file part, `model`, whose bytes it hands back to be checked and written — never the whole
/// file in memory.
///
/// Bounded: each text field at most ``fieldLimit`` bytes, at most ``fieldCount`` of them, and at
/// most ``overheadLimit`` bytes of part headers, boundaries and fields in all. A file byte that
/// comes before a matching `csrf` field is refused, so a forged form stores nothing.
struct MultipartModelForm {
    static let fieldLimit = 256
    static let fieldCount = 64
    static let overheadLimit = 64 * 1024
    /// The file part's field name.
    static let fileField = "model"

    private var stream: MultipartStream
    private let expectedCSRF: String
    /// The text fields read so far.
    private(set) var fields: [String: String] = [:]
    private var part: (name: String, isFile: Bool)?
    private var fieldBytes: [UInt8] = []
    private var csrfChecked = false
    private var fileStarted = false
    private var fileComplete = false
    private var overhead = 0

    /// A reader for a body whose `Content-Type` names `boundary`; the form's `csrf` field must be `csrf`.
    init(boundary: String, csrf: String) {
        stream = MultipartStream(boundary: boundary)
        expectedCSRF = csrf
    }

    /// The boundary of a `multipart/form-data` request, if it has a sound one.
    static func boundary(of request: Request) -> String? {
        guard let type = request.headers.contentType, type.type == "multipart", type.subType == "form-data",
              let boundary = type.parameters["boundary"], (1...70).contains(boundary.utf8.count)
        else { return nil }
        return boundary
    }

    /// Reads the next bytes of the body; returns the file's bytes among them, in order.
    mutating func feed(_ chunk: ByteBuffer) throws -> [ByteBuffer] {
        let events: [MultipartStream.Event]
        do {
            events = try stream.feed(chunk)
        } catch let error as MultipartStream.Malformed {
            throw APIError.invalid("the body is not a model upload form: \(error.reason)")
        }
        var file: [ByteBuffer] = []
        for event in events {
            switch event {
            case .part(let name, let filename):
                guard part == nil else { throw Self.malformed }
                part = (name, filename != nil)
                fieldBytes = []
            case .data(let buffer):
                guard let part else { throw Self.malformed }
                if part.isFile {
                    guard part.name == Self.fileField, !fileComplete else { throw Self.malformed }
                    guard csrfChecked else { throw DashboardError.csrfRefused }
                    fileStarted = true
                    file.append(buffer)
                } else {
                    fieldBytes.append(contentsOf: buffer.readableBytesView)
                    guard fieldBytes.count <= Self.fieldLimit else {
                        throw DashboardError.invalidForm("A form field is longer than \(Self.fieldLimit) bytes.")
                    }
                }
            case .end:
                try complete()
            }
        }
        overhead += chunk.readableBytes - file.reduce(0) { $0 + $1.readableBytes }
        guard overhead <= Self.overheadLimit else { throw Self.malformed }
        return file
    }

    /// Checks, once the body has ended, that it carried the token and a whole file.
    func finish() throws {
        guard stream.isComplete else { throw APIError.invalid("the upload was cut short") }
        guard csrfChecked else { throw DashboardError.csrfRefused }
        guard fileStarted, fileComplete else { throw DashboardError.invalidForm("Choose a sealed model file (.coffer) to upload.") }
    }

    static var malformed: APIError { APIError.invalid("the body is not a model upload form") }

    private mutating func complete() throws {
        guard let part else { throw Self.malformed }
        self.part = nil
        if part.isFile {
            if fileStarted { fileComplete = true }
            return
        }
        guard fields.count < Self.fieldCount else { throw Self.malformed }
        let value = String(decoding: fieldBytes, as: UTF8.self)
        fields[part.name] = value
        if part.name == CSRFMiddleware.field {
            guard CSRFMiddleware.matches(value, expectedCSRF) else { throw DashboardError.csrfRefused }
            csrfChecked = true
        }
    }
}
