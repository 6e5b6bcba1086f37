/// `count` bytes, byte `index` being `value(index)`, written by a plain loop into the array's
/// storage. `(0..<count).map { … }` costs a debug build about 100 ns a byte (the generic `map`,
/// unspecialised): a 12 MiB fixture held a thread of the cooperative pool for a second or more,
/// and every test waits for those threads (see ``offThePool(_:)``).
public func testBytes(_ count: Int, _ value: (Int) -> UInt8) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBufferPointer { buffer in
        var index = 0
        while index < count {
            buffer[index] = value(index)
            index += 1
        }
    }
    return bytes
}
