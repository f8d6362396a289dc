// A list that nearly always holds one element: a user's sessions (one per device, and most users
// have one device), a user's connections on an event loop. An `Array` of one element is a heap
// object of 32 bytes plus the element; here a single element is kept inline and only a second
// one moves the list to an array. It is a value like `Array`, in order, and costs nothing on the
// heap while it holds at most one element.

/// An ordered list that stores up to one element inline and more in an array.
public struct SmallList<Element> {
    fileprivate enum Storage {
        case empty
        case one(Element)
        /// Two or more elements; an array that shrinks to one goes back to `.one`.
        case many([Element])
    }

    private var storage: Storage

    public init() { storage = .empty }

    public init(_ elements: some Sequence<Element>) {
        self.init()
        for element in elements { append(element) }
    }

    public mutating func append(_ element: Element) {
        switch storage {
        case .empty: storage = .one(element)
        case .one(let first): storage = .many([first, element])
        case .many(var elements):
            // Out of `storage` first, so the array stays uniquely referenced and grows in place.
            storage = .empty
            elements.append(element)
            storage = .many(elements)
        }
    }

    /// Removes the elements that satisfy `shouldBeRemoved`, keeping the others in order.
    public mutating func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        switch storage {
        case .empty: return
        case .one(let only): if try shouldBeRemoved(only) { storage = .empty }
        case .many(var elements):
            storage = .empty
            try elements.removeAll(where: shouldBeRemoved)
            setStorage(to: elements)
        }
    }

    @discardableResult
    public mutating func remove(at index: Int) -> Element {
        switch storage {
        case .empty: preconditionFailure("SmallList index out of range")
        case .one(let only):
            precondition(index == 0, "SmallList index out of range")
            storage = .empty
            return only
        case .many(var elements):
            storage = .empty
            let removed = elements.remove(at: index)
            setStorage(to: elements)
            return removed
        }
    }

    private mutating func setStorage(to elements: [Element]) {
        switch elements.count {
        case 0: storage = .empty
        case 1: storage = .one(elements[0])
        default: storage = .many(elements)
        }
    }
}

extension SmallList: RandomAccessCollection, MutableCollection {
    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let elements): elements.count
        }
    }

    public subscript(position: Int) -> Element {
        get {
            switch storage {
            case .empty: preconditionFailure("SmallList index out of range")
            case .one(let only):
                precondition(position == 0, "SmallList index out of range")
                return only
            case .many(let elements): return elements[position]
            }
        }
        set {
            switch storage {
            case .empty: preconditionFailure("SmallList index out of range")
            case .one:
                precondition(position == 0, "SmallList index out of range")
                storage = .one(newValue)
            case .many(var elements):
                storage = .empty
                elements[position] = newValue
                storage = .many(elements)
            }
        }
    }
}

extension SmallList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension SmallList: Equatable where Element: Equatable {
    public static func == (lhs: SmallList, rhs: SmallList) -> Bool { lhs.elementsEqual(rhs) }
}

extension SmallList: Sendable where Element: Sendable {}
extension SmallList.Storage: Sendable where Element: Sendable {}
