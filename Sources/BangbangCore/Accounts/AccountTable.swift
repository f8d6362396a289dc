// Where the account records live: in pages indexed by user id.
//
// User ids are handed out in order from 1 and never reused (`AccountState.nextUserID`), so the
// records need no hash table. A dictionary of records stored each record beside its key with a
// quarter to over half of its buckets empty (its capacity is a power of two, at most three
// quarters full): about 200 bytes per account for a record of 112. Here id `n` is slot
// `(n - 1) % pageSize` of page `(n - 1) / pageSize`; a page is made whole when the first id in it
// arrives, so only the last page has room unused, and a lookup is two array indexings.
//
// Pages are also what a snapshot's copy-on-write copies: the first change after a cut copies the
// list of pages and the one page it touches, where a dictionary was copied whole.
//
// Ids that do not continue the run — which only a hand-written or damaged snapshot holds, since
// registration always takes the next id — go to a dictionary of outliers; a page made later takes
// over the outliers that fall into it, so every id has one place: its page if that exists, else
// the outliers.

/// The accounts by id. Reading one builds its `UserAccount` from the compact record.
public struct AccountTable: Sendable {
    /// Ids per page: a page of records is about 28 KiB.
    static let pageSize = 256

    fileprivate typealias Page = [AccountRecord?]

    private var pages: [Page] = []
    private var outliers: [UserID: AccountRecord] = [:]
    public private(set) var count = 0

    init() {}

    /// A table about to be given the records of `ids`: the pages for them are made at once, as far
    /// as at least half of their slots will be used; ids beyond go to the outliers.
    init(expecting ids: some Collection<UserID>) {
        let densest = UInt64(2 * ids.count)
        let last = ids.lazy.map(\.rawValue).filter { $0 <= densest }.max() ?? 0
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
        if location(of: user) == nil, let page = Self.page(of: user), page == pages.count { appendPage() }
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
    var records: Records { Records(pages: pages, outliers: outliers) }

    /// Records kept outside the pages (for tests: in-order ids have none).
    var outlierCount: Int { outliers.count }

    struct Records: Sequence {
        fileprivate let pages: [Page]
        fileprivate let outliers: [UserID: AccountRecord]

        struct Iterator: IteratorProtocol {
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
                        return (AccountTable.user(page: currentPage, slot: currentSlot), record)
                    }
                }
                return outliers.next().map { (user: $0.key, record: $0.value) }
            }
        }

        func makeIterator() -> Iterator { Iterator(pages: pages, outliers: outliers.makeIterator()) }
    }

    // MARK: Placement

    private static func page(of user: UserID) -> Int? {
        guard user.rawValue >= 1 else { return nil }
        let page = (user.rawValue - 1) / UInt64(pageSize)
        return page < UInt64(Int.max) ? Int(page) : nil
    }

    private static func user(page: Int, slot: Int) -> UserID { UserID(rawValue: UInt64(page * pageSize + slot) + 1) }

    private func location(of user: UserID) -> (page: Int, slot: Int)? {
        guard let page = Self.page(of: user), page < pages.count else { return nil }
        return (page, Int((user.rawValue - 1) % UInt64(Self.pageSize)))
    }

    /// Makes the next page and moves into it the outliers whose ids it covers.
    private mutating func appendPage() {
        var page = Page(repeating: nil, count: Self.pageSize)
        if !outliers.isEmpty {
            for slot in page.indices {
                page[slot] = outliers.removeValue(forKey: Self.user(page: pages.count, slot: slot))
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
