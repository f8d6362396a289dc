// The tunable rules of the order lifecycle, one documented value per knob.

/// Configuration of the orders part. The server loads it once and passes it to every decide
/// call; results that depend on it (a fee, an auto-confirm time) are written into the events,
/// so replaying a journal under a changed configuration still yields the recorded state. The
/// server's `--cancel-grace-seconds`, `--cancel-fee`, `--auto-confirm-hours` and `--rating-window-days` set the
/// four timing and money knobs below (their defaults are these), and `--campus` the campuses.
public struct OrderRules: Codable, Hashable, Sendable {
    /// Highest tip (and price per share) accepted: ¥500. Guards against typos of a few extra
    /// zeros, which would otherwise sit at the top of every "sort by tip" list.
    public var maximumTip: Cents = 50_000
    /// Highest goods budget of a purchase order: ¥2000; the runner advances it from their own pocket.
    public var maximumGoodsBudget: Cents = 200_000
    /// Farthest a deadline may lie ahead: 30 days. Errands are short-lived; anything later is a typo.
    public var maximumDeadlineAhead: Int64 = 30 * 24 * 3600 * 1000
    /// After acceptance the publisher may cancel free of charge for 2 minutes: long enough to
    /// undo a mistake, short enough that a runner who set off is not left empty-handed.
    public var cancellationGrace: Int64 = 2 * 60 * 1000
    /// Paid to the runner when the publisher cancels after the grace window: ¥2.
    public var cancellationFee: Cents = 200
    /// A delivered order auto-confirms after 24 hours, so a runner is never kept waiting by a
    /// publisher who forgot to tap "confirm".
    public var autoConfirmAfter: Int64 = 24 * 3600 * 1000
    /// A completed order can be rated for 7 days after it closed; then it is history, and the
    /// server moves it from the board shards to the archive. Long enough for a weekly look at
    /// one's orders, short enough that memory holds a week of closed orders, not all of them.
    public var ratingWindow: Int64 = 7 * 24 * 3600 * 1000
    /// Longest short text (names, places, titles, stations): 60 characters, one line on a phone.
    public var maximumShortText: Int = 60
    /// Longest free text (descriptions, notes, cancel reasons): 1000 characters.
    public var maximumLongText: Int = 1000
    /// Longest rating comment: 200 characters (product brief).
    public var maximumCommentLength: Int = 200
    /// Most items on one purchase order: 20, one screen of the form.
    public var maximumItems: Int = 20
    /// The campuses an order may name; empty (the default) accepts any name. Checked at publish
    /// only, so orders stored before a campus list was configured keep loading.
    public var campuses: [String] = []

    public init() {}
}
