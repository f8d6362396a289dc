// Where the account records live: in pages indexed by user id.
//
// User ids are handed out in order and never reused (`AccountState.nextUserID`, within the
// table's `IDSpace`: every id on one account partition, every P-th with many), so the
// records need no hash table. A dictionary of records stored each record beside its key with a
// quarter to over half of its buckets empty (its capacity is a power of two, at most three
// quarters full): about 200 bytes per account for a record of 112. Here the id of ordinal `k` in
// the space (the id itself on one partition) is slot `k % pageSize` of page `k / pageSize`; a page
// is made whole when the first id in it arrives, so only the last page has room unused, and a
// lookup is two array indexings.
//
// Pages are also what a snapshot's copy-on-write copies: the first change after a cut copies the
// list of pages and the one page it touches, where a dictionary was copied whole.
//
// Ids that do not continue the run — which only a hand-written or damaged snapshot holds, since
// registration always takes the next id — and ids of another space go to a dictionary of
// outliers; a page made later takes over the outliers that fall into it, so every id has one
// place: its page if that exists, else the outliers.

/// The accounts by id. Reading one builds its `UserAccount` from the compact record.
public struct AccountTable: Sendable {
    /// Ids per page: a page of records is about 28 KiB.
    static let pageSize = 256

    fileprivate typealias Page = [AccountRecord?]

    /// The ids the pages are laid out for.
    public let space: IDSpace
    private var pages: [Page] = []
    private var outliers: [UserID: AccountRecord] = [:]
    public private(set) var count = 0

    init(space: IDSpace = .all) {
        self.space = space
    }

    /// A table about to be given the records of `ids`: the pages for them are made at once, as far
    /// as at least half of their slots will be used; ids beyond go to the outliers.
    init(expecting ids: some Collection<UserID>, space: IDSpace = .all) {
        self.space = space
        let densest = UInt64(2 * ids.count)
        let ordinals = ids.lazy.compactMap { space.ordinal(of: $0.rawValue) }
        let last = ordinals.filter { $0 < densest }.max().map { $0 + 1 } ?? 0
        let pageCount = Int((last + UInt64(Self.pageSize) - 1) / UInt64(Self.pageSize))
        pages = (0..<pageCount).map { _ in Page(repeating: nil, count: Self.pageSize) }
    }

    public subscript(user: UserID) -> UserAccount? { record(user)?.account(id: user) }

    public var isEmpty: Bool { count == 0 }

    /// Every id, in no particular order (ascending but for outliers), read as the walk goes.
    public var keys: some Sequence<UserID> { records.lazy.map(\.user) }

    // MARK: Records

    func record(_ user: UserID) -> AccountRecord? {
        if let (page, slot) = location(of: user) { return pages[page][slot] }
        return outliers[user]
    }

    /// Adds the record of an id that has none.
    mutating func insert(_ record: AccountRecord, for user: UserID) {
        if location(of: user) == nil, let page = page(of: user), page == pages.count { appendPage() }
        if let (page, slot) = location(of: user) {
            precondition(pages[page][slot] == nil, "internal inconsistency in AccountTable: an id inserted twice")
            pages[page][slot] = record
        } else {
            precondition(outliers.updateValue(record, forKey: user) == nil,
                         "internal inconsistency in AccountTable: an id inserted twice")
        }
        count += 1
    }

    /// Changes the record of `user` in place; false when there is none.
    @discardableResult
    mutating func modify(_ user: UserID, _ change: (inout AccountRecord) -> Void) -> Bool {
        if let (page, slot) = location(of: user) {
            guard pages[page][slot] != nil else { return false }
            change(&pages[page][slot]!)
        } else {
            guard outliers[user] != nil else { return false }
            change(&outliers[user]!)
        }
        return true
    }

    /// Every record with its id, in no particular order.
    var records: Records { Records(space: space, pages: pages, outliers: outliers) }

    /// Records kept outside the pages (for tests: in-order ids have none).
    var outlierCount: Int { outliers.count }

    struct Records: Sequence {
        fileprivate let space: IDSpace
        fileprivate let pages: [Page]
        fileprivate let outliers: [UserID: AccountRecord]

        struct Iterator: IteratorProtocol {
            fileprivate let space: IDSpace
            fileprivate let pages: [Page]
            fileprivate var page = 0
            fileprivate var slot = 0
            fileprivate var outliers: Dictionary<UserID, AccountRecord>.Iterator

            mutating func next() -> (user: UserID, record: AccountRecord)? {
                while page < pages.count {
                    let (currentPage, currentSlot) = (page, slot)
                    slot += 1
                    if slot == AccountTable.pageSize { (page, slot) = (page + 1, 0) }
                    if let record = pages[currentPage][currentSlot] {
                        return (AccountTable.user(page: currentPage, slot: currentSlot, in: space), record)
                    }
                }
                return outliers.next().map { (user: $0.key, record: $0.value) }
            }
        }

        func makeIterator() -> Iterator { Iterator(space: space, pages: pages, outliers: outliers.makeIterator()) }
    }

    // MARK: Placement

    private func page(of user: UserID) -> Int? {
        guard let ordinal = space.ordinal(of: user.rawValue) else { return nil }
        let page = ordinal / UInt64(Self.pageSize)
        return page < UInt64(Int.max) ? Int(page) : nil
    }

    private static func user(page: Int, slot: Int, in space: IDSpace) -> UserID {
        UserID(rawValue: space.id(ordinal: UInt64(page * pageSize + slot)))
    }

    private func location(of user: UserID) -> (page: Int, slot: Int)? {
        guard let ordinal = space.ordinal(of: user.rawValue) else { return nil }
        let (page, slot) = ordinal.quotientAndRemainder(dividingBy: UInt64(Self.pageSize))
        return page < UInt64(pages.count) ? (Int(page), Int(slot)) : nil
    }

    /// Makes the next page and moves into it the outliers whose ids it covers.
    private mutating func appendPage() {
        var page = Page(repeating: nil, count: Self.pageSize)
        if !outliers.isEmpty {
            for slot in page.indices {
                page[slot] = outliers.removeValue(forKey: Self.user(page: pages.count, slot: slot, in: space))
            }
        }
        pages.append(page)
    }
}

extension AccountTable: Equatable {
    /// Equal records under equal ids, however they are placed.
    public static func == (lhs: AccountTable, rhs: AccountTable) -> Bool {
        lhs.count == rhs.count && lhs.records.allSatisfy { rhs.record($0.user) == $0.record }
    }
}

/// The sessions by id. Each is kept with its user's account, so finding one by its id alone walks
/// the accounts: this is for tests and tools, the store finds a session through its user.
public struct SessionTable: Sendable {
    let accounts: AccountTable

    public subscript(id: SessionID) -> Session? {
        for (user, record) in accounts.records {
            if let index = record.sessionIndex(id) { return record.sessions[index].session(user: user) }
        }
        return nil
    }

    public var count: Int { accounts.records.reduce(0) { $0 + $1.record.sessions.count } }
}
