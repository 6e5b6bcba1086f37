extension PlaintextSource {
    /// Copies every byte to `sink` at the same offsets, 1 MiB at a time on several threads.
    public func copy(to sink: some RandomAccessSink, workers: Int = SealedModel.defaultWorkerCount) throws {
        let piece: UInt64 = 1 << 20
        let pieces = length == 0 ? 0 : (length + piece - 1) / piece
        guard pieces > 0 else { return }
        try ChunkWorkers.forEach(chunkCount: pieces, workers: workers, bufferSize: Int(piece)) { buffer, index in
            let start = index * piece
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(piece, self.length - start))])
            try self.read(into: slice, at: start)
            try sink.write(UnsafeRawBufferPointer(slice), at: start)
        }
    }
}
