// `X-Forwarded-For` and `X-Forwarded-Proto`, the headers nginx and most load balancers write:
// a comma-separated list of client addresses, each proxy appending the address it received the
// request from, and the scheme(s) the request came in on. They have no specification; this
// accepts the forms in use: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`
// and `unknown`.

public enum XForwardedFor {
    /// The hops of `X-Forwarded-For` (nearest proxy last), each with the `X-Forwarded-Proto`
    /// scheme that goes with it: paired from the right when both lists are as long, otherwise
    /// the rightmost scheme (the one the nearest proxy set) for every hop.
    public static func parse(forwardedFor: [String], proto: [String]) throws(ForwardedHeaderError) -> [ForwardedHop] {
        let schemes = try parseProto(proto)
        let elements = HeaderSyntax.listElements(forwardedFor)
        var hops: [ForwardedHop] = []
        hops.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let node: ForwardedHop.Node
            if String(decoding: element, as: UTF8.self).lowercased() == "unknown" {
                node = .unidentified
            } else if let address = HeaderSyntax.nodeAddress(element, allowsBareIPv6: true) {
                node = .address(address)
            } else {
                throw ForwardedHeaderError("X-Forwarded-For: '\(HeaderSyntax.printable(element))' is not an IP address")
            }
            let usedTLS = schemes.count == elements.count ? schemes[index] : schemes.last ?? nil
            hops.append(ForwardedHop(node: node, usedTLS: usedTLS))
        }
        return hops
    }

    /// Every scheme of `X-Forwarded-Proto`, in order, mapped as `ForwardedHop.usedTLS` is.
    public static func parseProto(_ values: [String]) throws(ForwardedHeaderError) -> [Bool?] {
        var schemes: [Bool?] = []
        for element in HeaderSyntax.listElements(values) {
            schemes.append(try HeaderSyntax.usedTLS(scheme: element, header: "X-Forwarded-Proto"))
        }
        return schemes
    }
}
