// Profile operations (see protocol/operations-*.md).
import BangbangCore
import BangbangProtocol

enum ProfileOperations {
    static let all: [Operation] = []
}
