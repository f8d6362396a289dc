// Every test in this target runs serially: each starts a server and clients of its own, and
// timing-sensitive ones (backpressure, linger) should not compete for two cores.
import Testing

@Suite(.serialized, .timeLimit(.minutes(1)))
struct SocketServerTests {}
