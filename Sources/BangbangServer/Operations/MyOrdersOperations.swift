// MyOrders operations (see protocol/operations-*.md).
import BangbangCore
import BangbangProtocol

enum MyOrdersOperations {
    static let all: [Operation] = []
}
