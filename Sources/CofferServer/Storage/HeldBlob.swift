import Fluent

/// What the server holds at a content address an upload names (the API's `PUT` to it, or a
/// dashboard upload that declares it): the size its blob record states and the size of its stored
/// copy, each read once.
///
/// Read under the upload's lease, after any collection of the blob has ended
/// (``CollectionHold/waitUntilReleased(_:on:)``): collection leaves a leased blob alone, so the record
/// and bytes decided on stay until the upload ends. On an S3 store reading the copy's size is a
/// request (`HEAD`): deciding the quota's charge and whether the body is needed from one read
/// costs one.
struct HeldBlob: Sendable, Equatable {
    /// The size the blob's record states; nil when the blob is not registered.
    let registeredSize: Int64?
    /// The size of the stored copy; nil when the store has none.
    let storedSize: Int64?

    /// Reads both for `address`.
    static func read(_ address: String, store: any BlobStore, on db: any Database) async throws -> HeldBlob {
        let record = try await BlobRecord.find(address, on: db)
        return HeldBlob(registeredSize: record?.size, storedSize: try await store.size(of: address))
    }

    /// Whether the store holds the blob whole at `size` bytes: an upload of it need not be read.
    func isStored(at size: Int64) -> Bool { storedSize == size }

    /// Whether a registered blob's stored copy is missing or of another size (damaged: one address
    /// has one size), which an upload of its bytes replaces.
    var isDamaged: Bool { registeredSize.map { $0 != storedSize } ?? false }

    /// Whether an upload of `size` bytes spends quota (``TeamQuota``). A registered blob's bytes are
    /// counted already (for the team that uploaded it first), so re-sending one, or replacing a
    /// damaged copy of one, is free; an unregistered blob the store holds whole costs nothing more.
    func charges(_ size: Int64) -> Bool { registeredSize == nil && storedSize != size }
}
