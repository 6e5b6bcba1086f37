@testable import CofferServer
import Testing

@Suite("Allocator tuning")
struct AllocatorTuningTests {
    #if os(Linux)
    @Test("on glibc both thresholds are set (found through dlsym, as the server does at start)")
    func applied() {
        #expect(AllocatorTuning.apply())
    }
    #endif

    @Test("the mmap threshold lies between a download's buffers and an upload's parts")
    func thresholds() {
        #expect(Int(AllocatorTuning.mmapThreshold) > S3BlobStore.coalesced)
        #expect(Int(AllocatorTuning.mmapThreshold) < S3Upload.partSize)
        #expect(AllocatorTuning.trimThreshold > AllocatorTuning.mmapThreshold)
    }
}
