#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether both strings are the same UTF-8 bytes. `==` also calls canonically equivalent
    /// spellings equal ("\u{212A}ite" and "Kite"), which the database stores and counts apart.
    ///
    /// One `memcmp` where both keep their bytes contiguous, as native strings do (small ones
    /// included); `utf8.elementsEqual`, which walked both views a byte at a time, was 4 % of the
    /// report route's CPU time.
    func hasSameBytes(as other: String) -> Bool {
        let compared = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                mine.count == theirs.count && (mine.isEmpty || memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0)
            }
        }
        if let result = compared ?? nil { return result }
        return utf8.elementsEqual(other.utf8)
    }

    /// Feeds the UTF-8 bytes and their count to `hasher`: the hash that goes with
    /// ``hasSameBytes(as:)`` (`String`'s own hash normalises, as its `==` does).
    func hashBytes(into hasher: inout Hasher) {
        let hashed: Void? = utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            var copy = self
            copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
        hasher.combine(utf8.count)
    }

    /// The order of the UTF-8 bytes (as `memcmp`, a prefix first): negative, zero or positive.
    func compareBytes(with other: String) -> Int {
        let compared = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                let common = min(mine.count, theirs.count)
                let order = common == 0 ? 0 : Int(memcmp(mine.baseAddress!, theirs.baseAddress!, common))
                return order != 0 ? order : mine.count - theirs.count
            }
        }
        if let result = compared ?? nil { return result }
        return utf8.lexicographicallyPrecedes(other.utf8) ? -1 : (utf8.elementsEqual(other.utf8) ? 0 : 1)
    }
}
