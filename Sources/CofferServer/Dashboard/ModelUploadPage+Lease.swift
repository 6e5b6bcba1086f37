import Fluent
import Vapor

extension ModelUploadPage {
    /// Takes the upload's lease before a byte of its body is read and, under a team quota, reserves
    /// `size` bytes of `team`'s quota on it with the API's own check (``TeamQuota/admit(_:for:on:reservingOn:)``:
    /// 413 `quota_exceeded` when they do not fit beside what the team stores and its other uploads
    /// in flight reserved); returns its keeper, which renews it while the body arrives.
    ///
    /// The blob's address is known only once the body is in, so the lease names no blob until
    /// then (``UploadLeaseRecord/forUnnamedUpload(lifetime:now:)``, ``LeaseKeeper/name(_:)``).
    /// Before, the whole body was written to disk and only then checked against the quota: any
    /// number of uploads started at once each stored their bytes first, whatever the quota.
    ///
    /// An upload `declaring` its address (the script's, ``ModelUploadPage/declaredAddressHeader``)
    /// is leased and charged as the API's `PUT` to it is (``TeamQuota/admitUpload(of:size:for:store:on:reservingOn:)``):
    /// bytes stored at that size cost nothing, so a team near its quota can upload a model it
    /// stores already. A registered blob of another size is refused 422 before a byte is read: a
    /// body of `size` bytes could not hash to it, and would be received without a reservation.
    func takeLease(reserving size: Int64, for team: TeamRecord, declaring address: String? = nil, req: Request) async throws -> LeaseKeeper {
        if let address, let record = try await BlobRecord.find(address, on: req.db), record.size != size {
            throw APIError(.unprocessableEntity, "digest_mismatch", "a blob with this SHA-256 has \(record.size) bytes, not \(size)")
        }
        let lease = try await takeLease(naming: address, req: req)
        // Decided on a record and bytes that stay, with or without a quota (a declared upload of
        // stored bytes is answered from them): the lease keeps collection away from them, and one
        // collecting them now has finished once its hold is released.
        if let address { try await CollectionHold.waitUntilReleased(address, on: req.db) }
        if let teamQuota {
            let quota = TeamQuota(limit: teamQuota)
            if let address {
                try await quota.admitUpload(of: address, size: size, for: team, store: store, on: req.db, reservingOn: lease)
            } else {
                try await quota.admit(size, for: team, on: req.db, reservingOn: lease)
            }
        }
        return try LeaseKeeper(lease, lifetime: leaseLifetime, on: req.db, logger: req.logger)
    }

    /// Takes the request's upload lease, naming `address` (a blob the script declared) or no blob
    /// yet, held until ``releaseLease(_:)``.
    func takeLease(naming address: String?, req: Request) async throws -> UploadLeaseRecord {
        let lease = address.map { UploadLeaseRecord.forUpload(of: $0, lifetime: leaseLifetime) }
            ?? UploadLeaseRecord.forUnnamedUpload(lifetime: leaseLifetime)
        try await lease.create(on: req.db)
        req.storage[HeldLease.self] = lease
        return lease
    }

    /// Deletes the request's lease, if it holds one, with what it reserved: the upload ended, its
    /// blob registered (which counts instead) or refused.
    func releaseLease(_ req: Request) async {
        if let lease = req.storage[HeldLease.self] {
            req.storage[HeldLease.self] = nil
            try? await lease.delete(on: req.db)
        }
    }
}

/// The upload lease a request holds, from before its body is read until its blob is registered.
private enum HeldLease: StorageKey {
    typealias Value = UploadLeaseRecord
}
