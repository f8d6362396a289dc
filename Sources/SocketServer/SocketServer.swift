// SocketServer: Dispatch-driven listener and connections, write queues, TLS. Bytes only.
