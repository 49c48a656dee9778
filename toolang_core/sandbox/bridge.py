"""Inside a sandbox with ``network = "allow"``: a loopback port that leads to the runtime.

A sandbox has a network namespace of its own with nothing but loopback; the runtime's
proxy is reachable only through a Unix socket mounted into it. Programs speak to a
proxy over TCP (``HTTP_PROXY=http://127.0.0.1:3128``), so this bridge listens on that
port, relays each connection to the socket, and runs the program::

    python3 -I -S bridge.py <socket> <port> -- <program> [args…]

It exits with the program's status (128 + N when signal N ended it). Standard library
only, and nothing of toolang: it runs from the read-only file system inside the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: bridge.py <socket> <port> -- <program> [args…]", file=sys.stderr)
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    child = os.fork()  # before any thread exists
    if child == 0:
        listener.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
