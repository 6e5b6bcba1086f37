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
    func takeLease(reserving size: Int64, for team: TeamRecord, req: Request) async throws -> LeaseKeeper {
        let lease = try await takeLease(naming: nil, req: req)
        if let teamQuota { try await TeamQuota(limit: teamQuota).admit(size, for: team, on: req.db, reservingOn: lease) }
        return try LeaseKeeper(lease, lifetime: leaseLifetime, on: req.db, logger: req.logger)
    }

    /// Takes the lease of an upload that declares `address` (the script's,
    /// ``ModelUploadPage/declaredAddressHeader``), naming it, and reads what the server holds
    /// there once, after any collection of it ended (``HeldBlob``): the lease keeps collection
    /// away from the record and bytes decided on until the upload ends.
    func takeLease(declaring address: String, req: Request) async throws -> (UploadLeaseRecord, HeldBlob) {
        let lease = try await takeLease(naming: address, req: req)
        try await CollectionHold.waitUntilReleased(address, on: req.db)
        return (lease, try await HeldBlob.read(address, store: store, on: req.db))
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
