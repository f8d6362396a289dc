// Board operations (see protocol/operations-*.md).
import BangbangCore
import BangbangProtocol

enum BoardOperations {
    static let all: [Operation] = []
}
