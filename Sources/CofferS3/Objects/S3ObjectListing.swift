/// The pages of a listing (``S3Client/listObjects(prefix:pageSize:)``): each iteration step sends one
/// ListObjectsV2 request, so only one page is in memory at a time. A page may be empty; the sequence
/// ends after the page that has no continuation token.
public struct S3ObjectListing: AsyncSequence, Sendable {
    /// One page of objects.
    public typealias Element = [S3ObjectSummary]

    /// The client that sends each page's request.
    let client: S3Client
    /// The key prefix listed, relative to the location's.
    let prefix: String
    /// Keys per page, 1…1000.
    let pageSize: Int

    /// Fetches the pages in order; throws the ``S3Error`` of a failed request.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: S3Client
        let prefix: String
        let pageSize: Int
        /// The continuation token of the next page (nil for the first).
        var token: String?
        /// Set after the page without a continuation token.
        var finished = false

        /// The next page, or nil after the last.
        public mutating func next() async throws -> [S3ObjectSummary]? {
            guard !finished else { return nil }
            let page = try await client.listObjectsPage(prefix: prefix, pageSize: pageSize, token: token)
            token = page.next
            finished = page.next == nil
            return page.objects
        }
    }

    /// An iterator from the first page.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, prefix: prefix, pageSize: pageSize)
    }
}
