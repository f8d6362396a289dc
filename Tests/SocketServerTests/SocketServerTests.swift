// Every test in this target runs serially: fault injection is process-wide.
import Testing

@Suite(.serialized, .timeLimit(.minutes(1)))
struct SocketServerTests {}
