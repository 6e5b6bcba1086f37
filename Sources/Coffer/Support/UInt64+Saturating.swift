extension UInt64 {
    /// `self + other`, or the largest value instead of wrapping: a sum that large fits no bound
    /// and no disk.
    func addingSaturated(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `self - other`, or 0 when `other` is larger.
    func subtractingSaturated(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
