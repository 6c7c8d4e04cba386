#!/usr/bin/env python3
"""xff_flood.py PORT PATH KEYS [REPEAT] [CONNS] - a fast flood of distinct
client addresses for a server behind mod_remoteip: KEYS addresses
198.18.0.0 on (X-Forwarded-For), each sending REPEAT (default 2) GETs of
PATH, pipelined in batches of 64 over CONNS (default 4) keep-alive
connections to 127.0.0.1:PORT. Prints the status counts ("200=N 429=M")."""
import socket
import sys
import threading
from collections import Counter

port, path, keys = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 2
conns = int(sys.argv[5]) if len(sys.argv) > 5 else 4
counts = Counter()
lock = threading.Lock()


def request(i):
    addr = "198.18.%d.%d" % ((i >> 8) & 255, i & 255)
    return ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: %s\r\n"
            "User-Agent: xff-flood\r\n\r\n" % (path, addr)).encode()


def read_answers(f, n, got):
    """Reads n answers from file f, counting their status codes."""
    for _ in range(n):
        status = f.readline().split()[1].decode()
        length = 0
        while True:
            line = f.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        f.read(length)
        got[status] += 1


def worker(start):
    got = Counter()
    reqs = [request(i) for i in range(start, keys, conns) for _ in range(repeat)]
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    for b in range(0, len(reqs), 64):
        batch = reqs[b:b + 64]
        s.sendall(b"".join(batch))
        read_answers(f, len(batch), got)
    s.close()
    with lock:
        counts.update(got)


threads = [threading.Thread(target=worker, args=(c,)) for c in range(conns)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
