// Admin operations (see protocol/operations-*.md).
import BangbangCore
import BangbangProtocol

enum AdminOperations {
    static let all: [Operation] = []
}
