import NIOConcurrencyHelpers

/// The blob bodies this instance streams at once (`GET /v1/blobs/…` answered 200 or 206 with the
/// bytes): at most ``limit`` in all (COFFER_BLOB_STREAMS) and ``perAddress`` to one client address
/// (COFFER_BLOB_STREAMS_PER_ADDRESS, keyed as ``AddressBudget`` keys every per-address budget).
///
/// The routes are anonymous, and a streamed body holds memory (a folder's 1 MiB piece, a bucket's
/// few MiB in flight), a file handle or a store connection for as long as its client takes to read
/// it; the idle timeout does not end it while each write completes within it. Without a bound,
/// clients that read slowly could hold that for every tenant's downloads until memory or
/// descriptors ran out. HEAD answers, 304s, 416s and presigned redirects take no slot. A slot is
/// held until the work producing its body has ended, whatever became of its response
/// (``StreamSlot``): that work, its store reads and its buffers, is what the limits bound.
final class StreamSlots: Sendable {
    /// Why ``take(for:)`` gave no slot.
    enum Refusal: Error, Equatable {
        /// ``limit`` bodies are being streamed.
        case full
        /// ``perAddress`` bodies are being streamed to this client address.
        case addressFull
    }

    /// With a folder: a stream holds a 1 MiB piece and a file handle, so 1024 of them hold about
    /// 1 GiB.
    static let folderLimit = 1024
    /// With a bucket: a stream holds up to about 4 MiB (``S3DownloadRelay``) and one store connection,
    /// so as many as the store connections the server opens (``S3BlobStore/storeConnections``): about
    /// 1 GiB too, and a download past them would wait for a connection while holding its client's.
    static let bucketLimit = S3BlobStore.storeConnections
    /// One client address: the SDK and `coffer sync` download one blob at a time, so this is as many
    /// devices behind one NAT or proxy downloading in the same moment — a sixty-fourth of the folder's
    /// limit, so that a single address cannot hold more than a small part of the server.
    static let perAddressDefault = 16

    let limit: Int
    let perAddress: Int
    private let state: NIOLockedValueBox<Held>

    /// What is held: in all, and per address (each address's share is ``perAddress``; an address
    /// holding none has no entry).
    private struct Held {
        var total = 0
        var byAddress: KeyedShares<String>
    }

    init(limit: Int, perAddress: Int) {
        self.limit = limit
        self.perAddress = perAddress
        state = NIOLockedValueBox(Held(byAddress: KeyedShares(share: Int64(perAddress))))
    }

    /// A slot for a body streamed to `address` (a budget key); the refusal (nothing taken) when the
    /// address, or else the server, has all it may. The address is asked first: an address at its
    /// share hears so whether or not others have taken the rest.
    func take(for address: String) throws(Refusal) -> StreamSlot {
        let refusal: Refusal? = state.withLockedValue { held in
            guard held.byAddress.admits(1, for: address) else { return .addressFull }
            guard held.total < limit else { return .full }
            held.total += 1
            held.byAddress.take(1, for: address)
            return nil
        }
        if let refusal { throw refusal }
        return StreamSlot(slots: self, address: address)
    }

    /// The bodies being streamed: in all, and to `address`.
    func held(by address: String) -> (total: Int, address: Int) {
        // At most `perAddress`, an `Int`: the conversion cannot trap.
        state.withLockedValue { (total: $0.total, address: Int($0.byAddress.held(by: address))) }
    }

    /// Gives back a slot of `address`: called by ``StreamSlot/release()`` only, once a slot.
    fileprivate func release(_ address: String) {
        state.withLockedValue { held in
            // What was given back (the slot's one), so that the total stays the sum of the addresses'.
            held.total -= Int(held.byAddress.giveBack(1, for: address))
        }
    }
}

/// One streamed body's place among ``StreamSlots``, given back exactly once: by ``release()``, which
/// the store calls when the body's work has ended, or else when the last reference to it goes.
///
/// The store holds it inside the work that produces the body (the folder's reading task, the
/// bucket's ``S3DownloadRelay``), not in the response: Vapor lets a response go as soon as its
/// write fails, and when the client has gone before the response was written it still runs the
/// body, which reads the store with nobody to take the bytes. A slot given back with the response
/// left that read outside the bound, so a client opening and abandoning downloads could have more
/// store reads in flight than ``StreamSlots/limit``. The release when the last reference goes is
/// for a body that never runs (a response never written): its slot goes with the response.
final class StreamSlot: Sendable {
    private let slots: StreamSlots
    private let address: String
    /// Whether the slot was given back: ``release()`` and `deinit` may both come, and only the first
    /// gives it back.
    private let released = NIOLockedValueBox(false)

    fileprivate init(slots: StreamSlots, address: String) {
        self.slots = slots
        self.address = address
    }

    /// Gives the slot back, once: calls after the first (and the `deinit` that follows) do
    /// nothing, so a body's work ending on several paths never frees a slot another holds.
    func release() {
        let first: Bool = released.withLockedValue { done in
            guard !done else { return false }
            done = true
            return true
        }
        if first { slots.release(address) }
    }

    deinit { release() }
}
