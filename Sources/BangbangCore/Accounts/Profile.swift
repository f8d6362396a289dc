// The public face of an account: what other users see next to an order.

/// How a user wants to be addressed. `undisclosed` is the default: nobody is asked to say.
public enum Gender: String, Codable, Sendable, CaseIterable {
    case male
    case female
    case undisclosed
}

/// A user's profile. Optional fields are nil until set; setting one to "" clears it.
public struct Profile: Codable, Sendable, Equatable {
    public var nickname: String
    public var avatarURL: String?
    public var gender: Gender
    public var campus: String?
    public var dorm: String?
    public var bio: String?

    public init(nickname: String, avatarURL: String? = nil, gender: Gender = .undisclosed,
                campus: String? = nil, dorm: String? = nil, bio: String? = nil) {
        self.nickname = nickname
        self.avatarURL = avatarURL
        self.gender = gender
        self.campus = campus
        self.dorm = dorm
        self.bio = bio
    }

    /// The nickname given at registration; neutral and free of the phone number.
    static func defaultNickname(for user: UserID) -> String { "用户\(user.rawValue)" }

    mutating func merge(_ update: ProfileUpdate) {
        if let nickname = update.nickname { self.nickname = nickname }
        if let avatarURL = update.avatarURL { self.avatarURL = avatarURL.isEmpty ? nil : avatarURL }
        if let gender = update.gender { self.gender = gender }
        if let campus = update.campus { self.campus = campus.isEmpty ? nil : campus }
        if let dorm = update.dorm { self.dorm = dorm.isEmpty ? nil : dorm }
        if let bio = update.bio { self.bio = bio.isEmpty ? nil : bio }
    }
}

/// A partial profile edit: nil leaves a field alone, "" clears an optional one.
public struct ProfileUpdate: Codable, Sendable, Equatable {
    public var nickname: String?
    public var avatarURL: String?
    public var gender: Gender?
    public var campus: String?
    public var dorm: String?
    public var bio: String?

    public init(nickname: String? = nil, avatarURL: String? = nil, gender: Gender? = nil,
                campus: String? = nil, dorm: String? = nil, bio: String? = nil) {
        self.nickname = nickname
        self.avatarURL = avatarURL
        self.gender = gender
        self.campus = campus
        self.dorm = dorm
        self.bio = bio
    }

    var isEmpty: Bool {
        nickname == nil && avatarURL == nil && gender == nil && campus == nil && dorm == nil && bio == nil
    }
}

/// The limits of profile fields, counted in Characters.
public enum ProfileLimits {
    /// Fits a name on one line of an order card.
    public static let nickname = 1...20
    /// Room for any CDN URL with a signature, not for data smuggled in a URL.
    public static let avatarURL = 512
    /// A building and room number, with some slack.
    public static let dorm = 40
    /// A short self-description, about two lines on a phone.
    public static let bio = 200
    /// A school or campus name when the deployment configures no list.
    public static let campus = 40
}

extension ProfileUpdate {
    /// Validates and normalizes every present field (trimmed), in the order of the
    /// `profile.update` table; throws on the first bad one.
    public func validated(campuses: [String]) throws(DomainError) -> ProfileUpdate {
        var result = ProfileUpdate(gender: gender)
        if let nickname { result.nickname = try Self.validatedNickname(nickname) }
        if let avatarURL { result.avatarURL = try Self.validatedAvatarURL(avatarURL) }
        if let campus { result.campus = try Self.validatedCampus(campus, campuses: campuses) }
        if let dorm { result.dorm = try Self.validatedDorm(dorm) }
        if let bio { result.bio = try Self.validatedBio(bio) }
        guard !isEmpty else {
            throw DomainError(.invalidField, "Nothing to update.", field: "profile")
        }
        return result
    }

    // Each field's rule, for checking a request in its table's order (see RunnerVerification.swift).

    public static func validatedNickname(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "nickname", label: "Nickname", length: ProfileLimits.nickname)
    }

    /// "" clears the campus.
    public static func validatedCampus(_ value: String, campuses: [String]) throws(DomainError) -> String {
        try validatedCampus(value, field: "campus", campuses: campuses, allowsEmpty: true)
    }

    public static func validatedDorm(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "dorm", label: "Dorm", length: 0...ProfileLimits.dorm)
    }

    public static func validatedBio(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "bio", label: "Bio", length: 0...ProfileLimits.bio, allowsNewlines: true)
    }

    /// An http or https address with a host; "" clears the avatar.
    public static func validatedAvatarURL(_ value: String) throws(DomainError) -> String {
        let url = AccountText.trim(value)
        if url.isEmpty { return "" }
        let invalid = DomainError(.invalidField, "The avatar must be an http or https address of at most "
                                  + "\(ProfileLimits.avatarURL) characters.", field: "avatar_url")
        guard url.count <= ProfileLimits.avatarURL else { throw invalid }
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = url.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            rest = url.dropFirst(7)
        } else {
            throw invalid
        }
        guard let host = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first,
              !host.isEmpty,
              !url.unicodeScalars.contains(where: { $0.properties.isWhitespace
                                                    || $0.properties.generalCategory == .control })
        else { throw invalid }
        return url
    }

    /// A campus or school name: one of the configured ones when there are any.
    static func validatedCampus(_ value: String, field: String, campuses: [String],
                                allowsEmpty: Bool) throws(DomainError) -> String {
        if campuses.isEmpty {
            return try AccountText.validated(value, field: field, label: "School",
                                             length: (allowsEmpty ? 0 : 1)...ProfileLimits.campus)
        }
        let name = AccountText.trim(value)
        if name.isEmpty && allowsEmpty { return name }
        guard campuses.contains(name) else {
            throw DomainError(.invalidField, "Choose one of the schools this service covers.", field: field)
        }
        return name
    }
}
