/// One element of an XML document read by ``XMLReader``: its local name (namespace prefix dropped),
/// its child elements in order, and its own text with entities decoded. Attributes are not kept:
/// no S3 answer this client reads carries information in them.
struct XMLElement: Equatable, Sendable {
    /// The name without a namespace prefix.
    var name: String
    /// The child elements, in document order.
    var children: [XMLElement] = []
    /// The element's own character data (CDATA included), entities decoded.
    var text: String = ""

    /// The first child called `name`.
    func child(_ name: String) -> XMLElement? {
        children.first { $0.name == name }
    }

    /// Every child called `name`.
    func children(_ name: String) -> [XMLElement] {
        children.filter { $0.name == name }
    }

    /// The text of the first child called `name`.
    func text(of name: String) -> String? {
        child(name)?.text
    }
}
