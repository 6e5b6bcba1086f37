import Vapor

/// Stands in for Vapor's `multipart/form-data` decoder: no route decodes multipart bodies through
/// `req.content`, and MultipartKit 4.7.1's parser reads a table out of bounds — crashing the whole
/// server — on a part header name with a byte of 0x80 or more, which anyone can send to any route
/// that reads a form (the dashboard's CSRF check reads every POST). The one route that takes a
/// multipart form, the dashboard's model upload, reads it with its own ``MultipartStream``.
struct RefusedMultipart: ContentDecoder {
    func decode<D: Decodable>(_ decodable: D.Type, from body: ByteBuffer, headers: HTTPHeaders) throws -> D {
        throw Abort(.unsupportedMediaType, reason: "multipart/form-data bodies are not accepted here")
    }

    /// Installs it for `multipart/form-data`, for every route of every application in the process.
    static func install() {
        ContentConfiguration.global.use(decoder: RefusedMultipart(), for: .formData)
    }
}
