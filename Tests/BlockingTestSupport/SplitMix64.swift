/// SplitMix64: a small seeded generator, so that a test's random input can be replayed from its
/// seed, and fast in a debug build (one call a word, no system call).
public struct SplitMix64: RandomNumberGenerator {
    /// The generator's state; the next word comes from it.
    public var state: UInt64

    /// A generator whose first state is `state`.
    public init(state: UInt64) { self.state = state }

    /// A generator whose first state is `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next pseudo-random word.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
