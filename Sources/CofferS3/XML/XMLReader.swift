/// A small XML reader for the answers of an S3 store, which come from outside and are read as
/// untrusted input.
///
/// It reads elements, character data, CDATA, comments and processing instructions, decodes the five
/// predefined entities and numeric character references, and refuses everything else: a DOCTYPE (so
/// no entity can be declared or expanded), an unknown entity, a mismatched or unclosed tag, text outside
/// the root element, invalid UTF-8. Depth and element count are bounded, and the caller bounds the
/// input's size before it gets here (``S3Client`` collects at most ``S3Client/maximumResponseBytes``).
/// Every index is checked; no input traps.
struct XMLReader {
    /// Why a document was refused.
    struct Failure: Error, Equatable {
        /// What was wrong, for ``S3Error/malformedResponse(operation:reason:)``.
        let reason: String
    }

    /// The deepest nesting accepted; S3's answers are four levels deep.
    static let maximumDepth = 32
    /// The most elements accepted in one document (a 1000-key listing has about 8000).
    static let maximumElements = 200_000

    private let bytes: [UInt8]
    private var index = 0
    private var elementCount = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The root element of `bytes`.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> XMLElement {
        var reader = XMLReader(bytes)
        return try reader.document()
    }

    private mutating func document() throws(Failure) -> XMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        var stack: [(element: XMLElement, text: [UInt8])] = []
        var root: XMLElement?
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                let start = index
                index = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                let run = bytes[start..<index]
                if stack.isEmpty {
                    guard run.allSatisfy(Self.isWhitespace) else { throw Failure(reason: "text outside the root element") }
                } else {
                    try Self.appendDecoded(run, to: &stack[stack.count - 1].text)
                }
                continue
            }
            if matches("<?") {
                try skip(past: "?>")
            } else if matches("<!--") {
                try skip(past: "-->")
            } else if matches("<![CDATA[") {
                guard !stack.isEmpty else { throw Failure(reason: "CDATA outside the root element") }
                index += 9
                let start = index
                try skip(past: "]]>")
                stack[stack.count - 1].text.append(contentsOf: bytes[start..<(index - 3)])
            } else if matches("<!") {
                throw Failure(reason: "a DOCTYPE or declaration")
            } else if matches("</") {
                index += 2
                let name = try readName()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw Failure(reason: "an unterminated end tag") }
                index += 1
                guard let open = stack.popLast(), open.element.name == name else { throw Failure(reason: "a mismatched end tag") }
                var element = open.element
                guard let text = String(validating: open.text, as: UTF8.self) else { throw Failure(reason: "text that is not UTF-8") }
                element.text = text
                if stack.isEmpty { root = element } else { stack[stack.count - 1].element.children.append(element) }
            } else {
                guard root == nil else { throw Failure(reason: "a second root element") }
                index += 1
                let name = try readName()
                let selfClosing = try skipAttributes()
                elementCount += 1
                guard elementCount <= Self.maximumElements else { throw Failure(reason: "more than \(Self.maximumElements) elements") }
                if selfClosing {
                    let element = XMLElement(name: name)
                    if stack.isEmpty { root = element } else { stack[stack.count - 1].element.children.append(element) }
                } else {
                    guard stack.count < Self.maximumDepth else { throw Failure(reason: "nesting deeper than \(Self.maximumDepth)") }
                    stack.append((XMLElement(name: name), []))
                }
            }
        }
        guard stack.isEmpty else { throw Failure(reason: "an unclosed element") }
        guard let root else { throw Failure(reason: "no root element") }
        return root
    }

    private func matches(_ literal: StaticString) -> Bool {
        matches(literal, at: index)
    }

    private func matches(_ literal: StaticString, at position: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[position + offset] != start[offset] { return false }
        return true
    }

    /// Moves past the next `literal`, or fails at the end of input.
    private mutating func skip(past literal: StaticString) throws(Failure) {
        let first = literal.utf8Start.pointee
        while let next = bytes[index...].firstIndex(of: first) {
            if matches(literal, at: next) {
                index = next + literal.utf8CodeUnitCount
                return
            }
            index = next + 1
        }
        index = bytes.count
        throw Failure(reason: "input ends inside a comment, CDATA section or instruction")
    }

    /// A tag name; its local part (after the last `:`) is returned.
    private mutating func readName() throws(Failure) -> String {
        let start = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        guard index > start, let name = String(validating: bytes[start..<index], as: UTF8.self) else {
            throw Failure(reason: "a tag without a valid name")
        }
        return name.split(separator: ":").last.map(String.init) ?? name
    }

    /// Skips a start tag's attributes (quoted values may hold `>`); true when the tag ends with `/>`.
    private mutating func skipAttributes() throws(Failure) -> Bool {
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "<") {
                throw Failure(reason: "'<' inside a tag")
            } else if byte == UInt8(ascii: ">") {
                return index >= 2 && bytes[index - 2] == UInt8(ascii: "/")
            }
        }
        throw Failure(reason: "input ends inside a tag")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
    }

    /// Whether `byte` may be part of a tag name (a permissive test: anything but whitespace and markup).
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "<"), UInt8(ascii: "="),
             UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "&"):
            false
        default:
            true
        }
    }

    /// XML's whitespace: space, tab, newline, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
