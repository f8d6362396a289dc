import Glibc
import Platform
import Testing

@Suite struct ErrnoTests {
    @Test func namedValuesAreTheirCErrnos() {
        #expect(Errno.noSpace == Errno(ENOSPC))
        #expect(Errno.wouldBlock == Errno(EWOULDBLOCK))
        #expect(Errno.connectionReset.rawValue == ECONNRESET)
    }

    @Test func kindsGroupTheErrnosCallersTreatAlike() {
        #expect(Errno.noSpace.isOutOfSpace && Errno.diskQuotaExceeded.isOutOfSpace)
        #expect(!Errno.ioError.isOutOfSpace)
        #expect(Errno.readOnlyFileSystem.isPermissionDenied && Errno.operationNotPermitted.isPermissionDenied)
        #expect(!Errno.notADirectory.isPermissionDenied)
        #expect(Errno.tooManyOpenFiles.isResourceExhaustion && Errno.outOfMemory.isResourceExhaustion)
        #expect(!Errno.connectionAborted.isResourceExhaustion)
    }

    @Test func theDescriptionNamesTheErrorAndItsNumber() {
        #expect(Errno.noSpace.description == "No space left on device (errno \(ENOSPC))")
    }
}
