#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# An RC requester made of crafted packets, for 94-dup-read.sh: it sends
# RDMA READ requests (right ICRC, from IPv4 address SRC through a raw
# socket) to QP QPN at DST and reports what comes back to SRC's UDP port
# 4791. The responder's memory holds (i * 7 + 3) & 0xff at offset i from
# BASE, which is how the data of READ responses is checked.
#
#   _rdreq.py read SRC DST QPN SECONDS BASE RKEY PSN:OFF:LEN...
#       send one READ request per PSN:OFF:LEN (PSN, offset from BASE,
#       length), back to back, then collect answers for SECONDS (less if
#       every READ got its last response or a NAK came); print
#       "resp=N bytes=B data=ok|bad first=OP@PSN naks=PSN:SYNDROME,..."
import socket
import struct
import sys
import time

from _icrc import icrc, ROCE_PORT

OP_READ_REQ = 0x0c
OP_RESP_FIRST, OP_RESP_MIDDLE, OP_RESP_LAST, OP_RESP_ONLY = 0x0d, 0x0e, 0x0f, 0x10
OP_ACK = 0x11


def read_req(src, dst, qpn, psn, va, rkey, length, ident):
    bth = struct.pack("!BBHII", OP_READ_REQ, 0, 0xffff, qpn & 0xffffff,
                      (1 << 31) | (psn & 0xffffff))
    reth = struct.pack("!QII", va, rkey, length)
    udp_len = 8 + len(bth) + len(reth) + 4
    udp = struct.pack("!HHHH", 49152 + (ident & 0x3fff), ROCE_PORT, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, ident & 0xffff,
                     0x4000, 64, socket.IPPROTO_UDP, 0, socket.inet_aton(src),
                     socket.inet_aton(dst))
    pkt = ip + udp + bth + reth + b"\0\0\0\0"
    return pkt[:-4] + icrc(pkt)


def read(src, dst, qpn, seconds, base, rkey, reqs):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # room for a whole 1 MiB READ's responses (root: past rmem_max)
    r.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
                 8 << 20)
    r.bind((src, ROCE_PORT))
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    want = {}            # last PSN of each READ -> offset of its first byte
    expect = {}          # PSN -> offset its payload starts at
    for i, (psn, off, length) in enumerate(reqs):
        n = max(1, (length + 1023) // 1024)
        for k in range(n):
            expect[(psn + k) & 0xffffff] = off + k * 1024
        want[(psn + n - 1) & 0xffffff] = off
        s.sendto(read_req(src, dst, qpn, psn, base + off, rkey, length,
                          i + 1), (dst, 0))
    resp = nbytes = 0
    bad = False
    first = None
    naks = []
    done = set()
    end = time.monotonic() + seconds
    while len(done) < len(want) and not naks:
        left = end - time.monotonic()
        if left <= 0:
            break
        r.settimeout(left)
        try:
            p = r.recv(65536)
        except socket.timeout:
            break
        op, flags = p[0], p[1]
        psn = struct.unpack("!I", p[8:12])[0] & 0xffffff
        pad = (flags >> 4) & 3
        if op == OP_ACK:
            syn = p[12]
            if syn & 0x60:
                naks.append("%d:0x%02x" % (psn, syn))
            continue
        if op not in (OP_RESP_FIRST, OP_RESP_MIDDLE, OP_RESP_LAST,
                      OP_RESP_ONLY):
            continue
        hdr = 12 if op == OP_RESP_MIDDLE else 16
        data = p[hdr:len(p) - 4 - pad]
        resp += 1
        nbytes += len(data)
        if first is None:
            first = "0x%02x@%d" % (op, psn)
        off = expect.get(psn)
        if off is None or any(b != ((off + i) * 7 + 3) & 0xff
                              for i, b in enumerate(data)):
            bad = True
        if op in (OP_RESP_LAST, OP_RESP_ONLY):
            done.add(psn)
    print("resp=%d bytes=%d data=%s first=%s naks=%s" %
          (resp, nbytes, "bad" if bad else "ok", first or "-",
           ",".join(naks) or "-"), flush=True)
    return 0


def main(argv):
    if len(argv) >= 9 and argv[1] == "read":
        reqs = [tuple(int(x, 0) for x in a.split(":")) for a in argv[8:]]
        return read(argv[2], argv[3], int(argv[4], 0), float(argv[5]),
                    int(argv[6], 0), int(argv[7], 0), reqs)
    print("usage: _rdreq.py read SRC DST QPN SECONDS BASE RKEY "
          "PSN:OFF:LEN...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
