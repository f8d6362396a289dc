// permessage-deflate negotiation (RFC 7692 §5–§7): reading the parameters of one offer or
// response, choosing the server's answer, and checking a server's answer on the client side.

enum PermessageDeflate {
    static let extensionName = "permessage-deflate"

    enum ClientWindow: Hashable {
        case absent
        /// `client_max_window_bits` with no value: in an offer, "I can honour a cap".
        case withoutValue
        case bits(Int)
    }

    /// The four parameters of one permessage-deflate element, each at most once.
    struct ParameterSet: Hashable {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits: Int?
        var clientMaxWindowBits = ClientWindow.absent

        /// Nil when a parameter is unknown, repeated, or has an invalid value — RFC 7692 §5
        /// says such an offer must be declined and such a response must fail the connection.
        init?(_ parameters: [WebSocketExtension.Parameter]) {
            var seen: Set<String> = []
            for parameter in parameters {
                guard seen.insert(parameter.name).inserted else { return nil }
                switch parameter.name {
                case "server_no_context_takeover":
                    guard parameter.value == nil else { return nil }
                    serverNoContextTakeover = true
                case "client_no_context_takeover":
                    guard parameter.value == nil else { return nil }
                    clientNoContextTakeover = true
                case "server_max_window_bits":
                    guard let value = parameter.value, let bits = Self.windowBits(value) else { return nil }
                    serverMaxWindowBits = bits
                case "client_max_window_bits":
                    if let value = parameter.value {
                        guard let bits = Self.windowBits(value) else { return nil }
                        clientMaxWindowBits = .bits(bits)
                    } else {
                        clientMaxWindowBits = .withoutValue
                    }
                default:
                    return nil
                }
            }
        }

        /// 8...15 in decimal without leading zeros (RFC 7692 §7.1.2).
        private static func windowBits(_ text: String) -> Int? {
            switch text {
            case "8": 8
            case "9": 9
            case "10": 10
            case "11": 11
            case "12": 12
            case "13": 13
            case "14": 14
            case "15": 15
            default: nil
            }
        }
    }

    static func extensionElement(serverNoContextTakeover: Bool, clientNoContextTakeover: Bool,
                                 serverMaxWindowBits: Int?, clientMaxWindowBits: ClientWindow) -> WebSocketExtension {
        var parameters: [WebSocketExtension.Parameter] = []
        if serverNoContextTakeover { parameters.append(.init(name: "server_no_context_takeover")) }
        if clientNoContextTakeover { parameters.append(.init(name: "client_no_context_takeover")) }
        if let serverMaxWindowBits {
            parameters.append(.init(name: "server_max_window_bits", value: String(serverMaxWindowBits)))
        }
        switch clientMaxWindowBits {
        case .absent: break
        case .withoutValue: parameters.append(.init(name: "client_max_window_bits"))
        case .bits(let bits): parameters.append(.init(name: "client_max_window_bits", value: String(bits)))
        }
        return WebSocketExtension(name: extensionName, parameters: parameters)
    }

    /// The server's choice: the first permessage-deflate offer it can accept, its response
    /// element and the parameters both sides will then obey; nil to run uncompressed.
    static func negotiate(offers: [WebSocketExtension], configuration: DeflateConfiguration)
        -> (response: WebSocketExtension, parameters: DeflateParameters)? {
        guard configuration.isEnabled else { return nil }
        for offer in offers where HTTPSyntax.equalsIgnoringCase(offer.name, extensionName) {
            guard let requested = ParameterSet(offer.parameters) else { continue }
            // The answer may only lower an offered server window (§7.1.2.1); we cannot go
            // to 8, so such an offer is declined. Unasked, we state our window only when it
            // is below the default 15.
            let serverWindow: Int
            let announcedServerWindow: Int?
            if let offered = requested.serverMaxWindowBits {
                serverWindow = min(offered, configuration.serverMaxWindowBits)
                guard serverWindow >= 9 else { continue }
                announcedServerWindow = serverWindow
            } else {
                serverWindow = configuration.serverMaxWindowBits
                announcedServerWindow = serverWindow < 15 ? serverWindow : nil
            }
            // We never cap the client's window: our decompressor runs with 15 bits, which
            // reads any smaller window, so client_max_window_bits stays out of the answer.
            let serverNoContextTakeover = requested.serverNoContextTakeover || configuration.requestsServerNoContextTakeover
            let clientNoContextTakeover = requested.clientNoContextTakeover || configuration.requestsClientNoContextTakeover
            let response = extensionElement(serverNoContextTakeover: serverNoContextTakeover,
                                            clientNoContextTakeover: clientNoContextTakeover,
                                            serverMaxWindowBits: announcedServerWindow,
                                            clientMaxWindowBits: .absent)
            let parameters = DeflateParameters(serverNoContextTakeover: serverNoContextTakeover,
                                               clientNoContextTakeover: clientNoContextTakeover,
                                               serverMaxWindowBits: serverWindow,
                                               clientMaxWindowBits: 15)
            return (response, parameters)
        }
        return nil
    }

    /// Checks a server's permessage-deflate answer against what we offered (RFC 7692 §7.1).
    static func validate(response: WebSocketExtension, offer: DeflateOffer) throws(ClientHandshakeError) -> DeflateParameters {
        guard let answered = ParameterSet(response.parameters) else {
            throw .malformedExtensionResponse
        }
        if offer.requestsServerNoContextTakeover && !answered.serverNoContextTakeover {
            throw .extensionResponseMismatch("server_no_context_takeover was requested but not agreed")
        }
        var serverWindow = 15
        if let answeredBits = answered.serverMaxWindowBits {
            if let offeredBits = offer.serverMaxWindowBits, answeredBits > offeredBits {
                throw .extensionResponseMismatch("server_max_window_bits above the offered cap")
            }
            serverWindow = answeredBits
        } else if offer.serverMaxWindowBits != nil {
            throw .extensionResponseMismatch("server_max_window_bits was offered but not answered")
        }
        var clientWindow = 15
        switch answered.clientMaxWindowBits {
        case .absent:
            break
        case .withoutValue:
            throw .malformedExtensionResponse
        case .bits(let bits):
            guard offer.offersClientMaxWindowBits else {
                throw .extensionResponseMismatch("client_max_window_bits was not offered")
            }
            // zlib would silently compress with 9 bits, breaking the server's 8-bit inflater.
            guard bits >= 9 else {
                throw .extensionResponseMismatch("client_max_window_bits=8 cannot be honoured")
            }
            clientWindow = bits
        }
        return DeflateParameters(serverNoContextTakeover: answered.serverNoContextTakeover,
                                 clientNoContextTakeover: answered.clientNoContextTakeover || offer.requestsClientNoContextTakeover,
                                 serverMaxWindowBits: serverWindow,
                                 clientMaxWindowBits: clientWindow)
    }
}
