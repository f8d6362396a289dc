"""A reference echo server on the independent `websockets` library, for testing our client mode.

Listens on 127.0.0.1 on a free port (or the one given), prints `port=N` on its first line once
it is listening, echoes every message (text as text, binary as binary; permessage-deflate is
offered by default) and exits when its standard input closes, so a test that dies cannot leave
it behind."""
import sys
import threading

from websockets.sync.server import serve


def echo(connection):
    for message in connection:
        connection.send(message)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    with serve(echo, "127.0.0.1", port, max_size=16 * 1024 * 1024) as server:
        print(f"port={server.socket.getsockname()[1]}", flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        server.shutdown()


if __name__ == "__main__":
    main()
