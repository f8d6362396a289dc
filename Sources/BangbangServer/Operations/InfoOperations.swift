// Info operations (see protocol/operations-*.md).
import BangbangCore
import BangbangProtocol

enum InfoOperations {
    static let all: [Operation] = []
}
