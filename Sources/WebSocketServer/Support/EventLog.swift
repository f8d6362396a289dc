// Where the transport writes its log lines (refusals, timeouts, slow consumers): one call per
// event, never per byte. The server's structured `Logger` is one.
package protocol EventLog: Sendable {
    func info(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable>)
    func warning(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable>)
}
