/// The name of an enum value's case, without printing its payload (which may hold millions of weights).
func caseName(_ value: Any) -> String {
    if let label = Mirror(reflecting: value).children.first?.label { return label }
    return String(describing: value)
}
