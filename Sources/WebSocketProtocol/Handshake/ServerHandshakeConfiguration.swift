/// What the server accepts in an opening handshake. One value per listener, shared by all
/// connections.
public struct ServerHandshakeConfiguration: Sendable {
    /// Subprotocols we speak, most preferred first; the first one the client also offers wins.
    /// Default empty: no subprotocol is ever selected.
    public var subprotocols: [String]
    /// Decides on the `Origin` header (nil when absent, as from non-browser clients); false
    /// rejects with 403. Default accepts everything, because the native app sends no Origin and
    /// authentication happens after the upgrade; a deployment that serves browsers should set a
    /// list with `allowingOrigins(_:allowingMissing:)`.
    public var originPolicy: @Sendable (String?) -> Bool
    /// Whether a page this server served may connect whatever `originPolicy` says: its `Origin`
    /// names the request's own `Host`. Default true, so a deployment's own web app works
    /// with an allow-list that names only other sites.
    public var allowsOwnOrigin: Bool = true
    /// permessage-deflate policy; see `DeflateConfiguration` for its defaults.
    public var deflate: DeflateConfiguration

    public init(subprotocols: [String] = [],
                originPolicy: @escaping @Sendable (String?) -> Bool = { _ in true },
                deflate: DeflateConfiguration = DeflateConfiguration()) {
        precondition(subprotocols.allSatisfy(HTTPSyntax.isToken), "subprotocols must be tokens")
        self.subprotocols = subprotocols
        self.originPolicy = originPolicy
        self.deflate = deflate
    }

    /// A policy accepting exactly these origins (compared case-insensitively, as the ASCII
    /// serialization of an origin is), plus requests without `Origin` when `allowingMissing`.
    public static func allowingOrigins(_ origins: [String], allowingMissing: Bool) -> @Sendable (String?) -> Bool {
        let allowed = origins
        return { origin in
            guard let origin else { return allowingMissing }
            return allowed.contains { HTTPSyntax.equalsIgnoringCase($0, origin) }
        }
    }
}
