/// The pages of a listing (``S3Client/listObjects(prefix:pageSize:)``,
/// ``S3Client/multipartUploads(prefix:pageSize:)``): each iteration step sends one request, so only
/// one page is in memory at a time. A page may be empty; the sequence ends after the page that
/// names no next one, and fails (``S3Error/malformedResponse(operation:reason:)``) at one that
/// names its own position as the next.
public struct S3Pages<Page: Sendable>: AsyncSequence, Sendable {
    /// One page.
    public typealias Element = Page

    /// Where a page starts: a ListObjectsV2 continuation token, or ListMultipartUploads markers.
    enum Position: Sendable, Hashable {
        case token(String)
        case upload(key: String, uploadID: String)

        /// What names the position, for the error of a listing that does not advance.
        var name: String {
            switch self {
            case .token: "the continuation token"
            case .upload: "the markers"
            }
        }
    }

    /// The S3 operation each page is (for errors).
    let operation: String

    /// Sends the request for the page at a position (nil: the first); the page and the next
    /// page's position (nil after the last).
    let fetch: @Sendable (Position?) async throws -> (page: Page, next: Position?)

    /// Fetches the pages in order; throws the ``S3Error`` of a failed request.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let operation: String
        let fetch: @Sendable (Position?) async throws -> (page: Page, next: Position?)
        /// The next page's position (nil for the first).
        var position: Position?
        /// Set after the page that names no next one.
        var finished = false
        /// Every position asked for so far: a store that names one again (A → B → A …) would have
        /// the listing send requests without end.
        var seen: Set<Position> = []

        /// The next page, or nil after the last.
        public mutating func next() async throws -> Page? {
            guard !finished else { return nil }
            let answer = try await fetch(position)
            if let next = answer.next, next == position || !seen.insert(next).inserted {
                throw S3Error.malformedResponse(operation: operation, reason: "\(next.name) did not advance")
            }
            position = answer.next
            finished = answer.next == nil
            return answer.page
        }
    }

    /// An iterator from the first page.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(operation: operation, fetch: fetch)
    }
}

/// The pages of objects of ``S3Client/listObjects(prefix:pageSize:)``.
public typealias S3ObjectListing = S3Pages<[S3ObjectSummary]>

/// The pages of unfinished multipart uploads of ``S3Client/multipartUploads(prefix:pageSize:)``.
public typealias S3MultipartUploadListing = S3Pages<[S3MultipartUpload]>
