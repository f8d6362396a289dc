// The socket calls that take or return an address, in the transport's `SocketAddress` rather
// than the raw `sockaddr` structures the system-call layer speaks.
import Glibc
import Platform

extension Syscalls {
    func bind(_ descriptor: Int32, to address: SocketAddress) throws(Errno) {
        try address.withSockaddr { pointer, length in
            Result { () throws(Errno) in try bind(descriptor, to: pointer, length: length) }
        }.get()
    }

    /// Starts a non-blocking connect: true when already connected, false while in progress.
    func connect(_ descriptor: Int32, to address: SocketAddress) throws(Errno) -> Bool {
        try address.withSockaddr { pointer, length in
            Result { () throws(Errno) in try connect(descriptor, to: pointer, length: length) }
        }.get()
    }

    /// Accepts one connection from `listener`, with the peer's address; nil when the backlog is
    /// empty.
    func acceptConnection(on listener: Int32) throws(Errno) -> (Int32, SocketAddress)? {
        guard let accepted = try accept(listener) else { return nil }
        return (accepted.descriptor, SocketAddress(storage: accepted.peer))
    }

    func localAddress(of descriptor: Int32) throws(Errno) -> SocketAddress {
        SocketAddress(storage: try localAddress(descriptor))
    }
}
