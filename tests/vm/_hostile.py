#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# A hostile RoCEv2 peer for 94-hostile-peer.sh: crafted packets (right
# ICRC unless said otherwise, from a raw socket, so the IP header is ours)
# at the QPs of tests/progs/hostile_peer.c on the other VM, then checked
# traffic on the QPs that must have lived through it.
#
#   _hostile.py SRC DST SPOOF PEER_QPN PSN VICTIM_LINE...
#       SRC is the address the victim's connected QPs name as their peer
#       (answers come back to SRC's UDP port 4791, which this binds),
#       SPOOF another address of the subnet, PEER_QPN and PSN what the
#       victim was started with, VICTIM_LINE the line it printed.
#
# Prints "ok DESC" or "not ok DESC" for each check of what came back,
# then "expect NAME=N ..." (what the victim's device counters must have
# moved by) and "want QP=LEN:FNV ..." (the receives the victim must have
# completed). Nothing here waits for more than a few seconds.
#
#   _hostile.py reads SRC DST LIVE_QPN N
#       the responder of N RDMA READs the victim's live QP (LIVE_QPN,
#       max_rd_atomic 1) sends to SRC (it prints "listening" once it can
#       hear them): each request is answered only
#       after 0.3 s in which any further one would have been seen, with
#       1 KiB of (i * 11 + 1) & 0xff; prints "reads answered=N
#       max_outstanding=M" and fails unless M is 1 (IBTA: a requester has
#       at most max_rd_atomic READs and atomics outstanding).
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _icrc import icrc, ROCE_PORT  # noqa: E402

SEND_ONLY, WRITE_MIDDLE, WRITE_ONLY = 0x04, 0x07, 0x0a
READ_REQ, READ_RESP_ONLY, ACK, ATOMIC_ACK = 0x0c, 0x10, 0x11, 0x12
FETCH_ADD = 0x14
ATOMIC_WRITE = 0x1d     # IBTA 1.5 RDMA Atomic Write: RETH, 8 bytes
UC_SEND_ONLY, UD_SEND_ONLY = 0x24, 0x64
XRC = 0xa0              # the XRC transport: 0xa0 | the RC operation
QKEY = 0x11111111
HIGH = 32768            # MR1's upper half, which checked traffic may write


def pat(n, k):
    return bytes((i * 13 + k) & 0xff for i in range(n))


def mr_pattern(off, n):
    return bytes(((off + i) * 7 + 3) & 0xff for i in range(n))


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


def xrceth(srqn):
    return struct.pack("!I", srqn & 0xffffff)


class Peer:
    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.ident = 1
        self.sent = 0
        self.raw = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                 socket.IPPROTO_RAW)
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rx.bind((src, ROCE_PORT))

    def frame(self, op, qpn, psn, ext=b"", payload=b"", src=None,
              pkey=0xffff, ackreq=False, good_icrc=True, cut=None):
        """One RoCEv2 IPv4 packet; cut keeps only that many bytes after
        the UDP header (then an ICRC over what is left)."""
        pad = -len(payload) % 4
        bth = struct.pack("!BBHII", op, pad << 4, pkey, qpn & 0xffffff,
                          (ackreq << 31) | (psn & 0xffffff))
        body = bth + ext + payload + bytes(pad)
        if cut is not None:
            body = body[:cut]
        udp_len = 8 + len(body) + 4
        self.ident += 1
        udp = struct.pack("!HHHH", 49152 + (self.ident & 0x3fff), ROCE_PORT,
                          udp_len, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len,
                         self.ident & 0xffff, 0x4000, 64, socket.IPPROTO_UDP,
                         0, socket.inet_aton(src or self.src),
                         socket.inet_aton(self.dst))
        pkt = ip + udp + body + bytes(4)
        crc = icrc(pkt)
        if not good_icrc:
            crc = bytes([crc[0] ^ 0x80]) + crc[1:]
        return pkt[:-4] + crc

    def send(self, *args, **kw):
        self.raw.sendto(self.frame(*args, **kw), (self.dst, 0))
        self.sent += 1

    def send_raw(self, udp_payload):
        """A UDP datagram of udp_payload to the RoCE port, from SRC."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(udp_payload, (self.dst, ROCE_PORT))
        s.close()
        self.sent += 1

    def answers(self, seconds, until=None):
        """(op, dqpn, psn, rest) of every packet that comes back within
        seconds, or until until(answers) holds."""
        got = []
        end = time.monotonic() + seconds
        while until is None or not until(got):
            left = end - time.monotonic()
            if left <= 0:
                break
            self.rx.settimeout(left)
            try:
                p = self.rx.recv(65536)
            except socket.timeout:
                break
            if len(p) < 16:
                continue
            op, flags = p[0], p[1]
            dqpn = struct.unpack("!I", p[4:8])[0] & 0xffffff
            psn = struct.unpack("!I", p[8:12])[0] & 0xffffff
            pad = (flags >> 4) & 3
            got.append((op, dqpn, psn, p[12:len(p) - 4 - pad]))
        return got


results = []


def check(ok, desc):
    results.append(ok)
    print("%s %s" % ("ok" if ok else "not ok", desc), flush=True)


def parse_victim(words):
    v = {}
    for k, val in zip(words[::2], words[1::2]):
        v[k] = [int(x) for x in val.split(",")] if k == "sac" else int(val)
    return v


def reads(src, dst, live, n):
    p = Peer(src, dst)
    # The victim may send once the socket is bound (a slow kernel takes
    # seconds to get here).
    print("listening", flush=True)
    data = bytes((i * 11 + 1) & 0xff for i in range(1024))
    answered = most = 0
    while answered < n:
        # The victim posts its first READ once A is through its own checks
        # of the crafted packets, which take a debug kernel well over 10 s.
        got = [g for g in p.answers(90.0 if not answered else 10.0,
                                    lambda g: len(g) >= 1)
               if g[0] == READ_REQ]
        if not got:
            break
        got += [g for g in p.answers(0.3) if g[0] == READ_REQ]
        most = max(most, len({g[2] for g in got}))
        for psn in sorted({g[2] for g in got}):
            answered += 1
            p.send(READ_RESP_ONLY, live, psn, struct.pack("!I", answered),
                   data)
    print("reads answered=%d max_outstanding=%d" % (answered, most))
    return 0 if answered == n and most == 1 else 1


def main(argv):
    if len(argv) == 6 and argv[1] == "reads":
        return reads(argv[2], argv[3], int(argv[4], 0), int(argv[5]))
    if len(argv) < 7:
        print("usage: _hostile.py SRC DST SPOOF PEER_QPN PSN VICTIM_LINE...",
              file=sys.stderr)
        return 2
    src, dst, spoof = argv[1], argv[2], argv[3]
    pq, psn = int(argv[4], 0), int(argv[5], 0)
    v = parse_victim(" ".join(argv[6:]).split())
    live, sac, uc, ud = v["live"], v["sac"], v["uc"], v["ud"]
    va, rkey, va2, rkey2 = v["va"], v["rkey"], v["va2"], v["rkey2"]
    p = Peer(src, dst)
    low16 = reth(va, rkey, 16)
    deth = struct.pack("!II", QKEY, 0x77)

    # 1. Packets every QP must drop, each counted once in rx_dropped.
    drops = 0
    p.send(WRITE_ONLY, live, psn, low16, bytes(16), good_icrc=False)
    p.send_raw(b"\x0a\0\xff")                       # shorter than a BTH
    p.send(WRITE_ONLY, live, psn, low16, bytes(16), cut=20)  # cut RETH
    p.send(0x1e, live, psn, b"", bytes(8))          # reserved RC opcode
    p.send(0xff, live, psn, b"", bytes(8))          # reserved opcode
    p.send(SEND_ONLY, 0xfffff0, psn, b"", bytes(8))  # no such QP
    p.send(SEND_ONLY, v["dead"], psn, b"", bytes(8))  # destroyed QP
    p.send(SEND_ONLY, v["reset"], psn, b"", bytes(8))
    p.send(SEND_ONLY, v["init"], psn, b"", bytes(8))
    p.send(WRITE_ONLY, live, psn, low16, bytes(16), pkey=0x1234)
    p.send(WRITE_ONLY, live, psn, low16, bytes(16), src=spoof)
    p.send(UD_SEND_ONLY, live, psn, deth, bytes(8))  # UD at an RC QP
    p.send(SEND_ONLY, ud, psn, b"", bytes(8))       # RC at a UD QP
    p.send(UD_SEND_ONLY, ud, 1, struct.pack("!II", QKEY ^ 1, 0x77),
           bytes(8))                                # wrong Q_Key
    p.send(UD_SEND_ONLY, ud, 1, deth, bytes(8), pkey=0)
    p.send(UC_SEND_ONLY, uc, psn, b"", bytes(8), src=spoof)
    p.send(WRITE_ONLY, uc, psn, low16, bytes(16))   # RC opcode at UC
    # XRC: out of sequence naming a bad SRQ (must not end the target QP),
    # each transport at the other's QPs, a response at a target.
    xtgt, xs, xs2 = v["xtgt"], v["xsrq"], v["xsrq2"]
    p.send(XRC | SEND_ONLY, xtgt, psn + 50, xrceth(xs2), bytes(8))
    p.send(XRC | SEND_ONLY, xtgt, psn - 5, xrceth(0xabcdef), bytes(8))
    p.send(SEND_ONLY, xtgt, psn, b"", bytes(8))
    p.send(XRC | SEND_ONLY, live, psn, xrceth(xs), bytes(8))
    p.send(XRC | ACK, xtgt, psn, struct.pack("!I", 0))
    drops = p.sent
    icrc_errors = 1
    # Bad before any QP sees them (rx_errors): the ICRC, the 3 bytes, the
    # cut RETH, two opcodes, two QP numbers, two P_Keys.
    errors = 9
    got = p.answers(1.0)
    check(not got, "%d malformed, misdirected or spoofed packets: no answer "
          "(%d came)" % (drops, len(got)))

    # 2. PSN chaos at the live RC QP, from its peer's address.
    p.send(WRITE_ONLY, live, psn + 100, low16, bytes(16))   # ahead
    p.send(SEND_ONLY, live, psn + 2000, b"", bytes(8))      # further ahead
    p.send(WRITE_ONLY, live, psn - 10, low16, bytes(16), ackreq=True)
    p.send(READ_REQ, live, psn - 3, reth(va, rkey, 4096))   # never asked
    p.send(ACK, live, 1, struct.pack("!I", 0))              # no request out
    p.send(READ_RESP_ONLY, live, 1, struct.pack("!I", 0), bytes(64))
    drops += 4
    got = p.answers(1.5)
    naks = [g for g in got if g[0] == ACK and g[1] == pq and
            g[3][0] & 0xe0 == 0x60]
    check(len(naks) == 1 and naks[0][2] == psn and naks[0][3][0] == 0x60,
          "PSNs ahead: one sequence error NAK of PSN %d (%s)" %
          (psn, [(g[2], hex(g[3][0])) for g in naks]))
    # IBTA 9.7.5.1.2: a duplicate is acknowledged with the last PSN taken.
    acks = [g for g in got if g[0] == ACK and g[3][0] & 0xe0 == 0]
    check([g[2] for g in acks] == [(psn - 1) & 0xffffff],
          "a duplicate WRITE is acknowledged again, not executed (%s)" %
          [g[2] for g in acks])
    check(not [g for g in got if g[0] != ACK],
          "a duplicate READ nobody asked for gets no data")

    # 3. One invalid request at each sacrificial QP: a NAK, then ERR.
    bad = [
        ("WRITE with a forged R_Key", WRITE_ONLY,
         reth(va, rkey ^ 0x5a5a5a00, 64), bytes(64), 0x62),
        ("WRITE with another PD's R_Key", WRITE_ONLY,
         reth(va2, rkey2, 64), bytes(64), 0x62),
        ("READ past the MR's end", READ_REQ, reth(va, rkey, 1 << 20), b"",
         0x62),
        ("READ of 4 GiB - 1", READ_REQ, reth(va, rkey, 0xffffffff), b"",
         0x61),
        ("misaligned FETCH_ADD", FETCH_ADD,
         struct.pack("!QIQQ", va + 4, rkey, 1, 0), b"", 0x61),
        ("WRITE Middle with no First", WRITE_MIDDLE, b"", bytes(1024),
         0x61),
        ("WRITE Only shorter than its DMA length", WRITE_ONLY,
         reth(va, rkey, 200), bytes(100), 0x61),
        ("misaligned ATOMIC_WRITE", ATOMIC_WRITE, reth(va + 4, rkey, 8),
         pat(8, 3), 0x61),
        ("ATOMIC_WRITE of 4 bytes", ATOMIC_WRITE, reth(va, rkey, 4),
         pat(4, 3), 0x61),
        ("ATOMIC_WRITE with a forged R_Key", ATOMIC_WRITE,
         reth(va, rkey ^ 0x5a5a5a00, 8), pat(8, 3), 0x62),
    ]
    for i, (desc, op, ext, payload, syn) in enumerate(bad):
        p.send(op, sac[i], psn, ext, payload)
    drops += len(bad)
    got = p.answers(2.0, lambda g: len(g) >= len(bad))
    for i, (desc, op, ext, payload, syn) in enumerate(bad):
        mine = [g for g in got if g[1] == pq + 1 + i]
        check(len(mine) == 1 and mine[0][0] == ACK and
              mine[0][2] == psn and mine[0][3][0] == syn,
              "%s: NAK 0x%02x, nothing else (%s)" %
              (desc, syn, [(hex(g[0]), g[2], g[3][:1].hex()) for g in mine]))

    # 4. Checked traffic on the QPs that must still work.
    w = pat(1024, 5)
    s = pat(512, 9)
    u = pat(256, 17)
    c = pat(300, 21)
    used = 2 + 1
    p.send(READ_REQ, v["rtr"], psn, reth(0, 0, 0))  # RTR answers
    got = p.answers(1.5, lambda g: len(g) >= 1)
    check([(g[0], g[2], len(g[3])) for g in got] ==
          [(READ_RESP_ONLY, psn, 4)],
          "a QP in RTR answers a READ of 0 bytes (%s)" %
          [(hex(g[0]), g[2]) for g in got])
    p.send(WRITE_ONLY, live, psn, reth(va + HIGH, rkey, len(w)), w,
           ackreq=True)
    p.send(READ_REQ, live, psn + 1, reth(va + HIGH, rkey, len(w)))
    p.send(SEND_ONLY, live, psn + 2, b"", s, ackreq=True)
    p.send(FETCH_ADD, live, psn + 3,
           struct.pack("!QIQQ", va + HIGH + 2048, rkey, 5, 0))
    # IBTA 1.5: an ATOMIC_WRITE is answered by a READ response of no data;
    # its duplicate (other bytes) gets that answer again, and is not done.
    aw = pat(8, 29)
    awr = reth(va + HIGH + 4096, rkey, 8)
    p.send(ATOMIC_WRITE, live, psn + 4, awr, aw, ackreq=True)
    p.send(READ_REQ, live, psn + 5, reth(va + HIGH + 4096, rkey, 8))
    p.send(ATOMIC_WRITE, live, psn + 4, awr, pat(8, 31), ackreq=True)
    p.send(READ_REQ, live, psn + 6, reth(va + HIGH + 4096, rkey, 8))
    p.send(UD_SEND_ONLY, ud, 7, deth, u)
    p.send(UC_SEND_ONLY, uc, psn, b"", c)
    used += 10
    got = p.answers(3.0, lambda g:
                    any(x[0] == ATOMIC_ACK for x in g) and
                    len([x for x in g if x[0] == READ_RESP_ONLY]) >= 5)
    # READ response: AETH (4 bytes), then the data
    data = dict((g[2], g[3][4:]) for g in got if g[0] == READ_RESP_ONLY)
    resp = [(g[2] - psn, len(g[3])) for g in got if g[0] == READ_RESP_ONLY]
    check(data.get(psn + 1) == w,
          "live RC QP: a WRITE, then a READ of it gets the same 1024 bytes")
    check(sorted(resp) == [(1, 1028), (4, 4), (4, 4), (5, 12), (6, 12)],
          "live RC QP: the ATOMIC_WRITE and its duplicate each answered by "
          "a READ response of no data (%s)" % resp)
    check(data.get(psn + 5) == aw and data.get(psn + 6) == aw,
          "live RC QP: a READ after the ATOMIC_WRITE gets its 8 bytes, and "
          "one after its duplicate the same")
    orig = mr_pattern(HIGH + 2048, 8)
    atom = [g for g in got if g[0] == ATOMIC_ACK]
    check(len(atom) == 1 and atom[0][2] == psn + 3 and
          struct.unpack("!Q", atom[0][3][4:12])[0] ==
          int.from_bytes(orig, "little"),
          "live RC QP: FETCH_ADD returns the old value")
    naks = [g for g in got if g[0] == ACK and g[3][0] & 0x60]
    check(not naks, "live RC QP: no NAK (%s)" %
          [(g[2], hex(g[3][0])) for g in naks])

    # 5. The XRC target: a SEND into its SRQ, a WRITE and a READ of it
    # (the SRQ's PD is MR1's), then a SEND naming the other domain's SRQ
    # at the PSN expected: an Invalid Request NAK, and the QP to ERR.
    x = pat(200, 33)
    xw = pat(512, 37)
    xr = reth(va + HIGH + 8192, rkey, len(xw))
    p.send(XRC | SEND_ONLY, xtgt, psn, xrceth(xs), x, ackreq=True)
    p.send(XRC | WRITE_ONLY, xtgt, psn + 1, xrceth(xs) + xr, xw)
    p.send(XRC | READ_REQ, xtgt, psn + 2, xrceth(xs) + xr)
    used += 3
    got = p.answers(2.0, lambda g: any(a[0] == XRC | READ_RESP_ONLY
                                       for a in g))
    data = [g[3][4:] for g in got if g[0] == XRC | READ_RESP_ONLY]
    check(data == [xw] and all(g[1] == pq + len(bad) + 3 for g in got),
          "XRC target: a SEND and a WRITE into its SRQ's PD, and a READ "
          "of it answered with XRC opcodes (%s)" %
          [(hex(g[0]), g[2]) for g in got])
    p.send(XRC | SEND_ONLY, xtgt, psn + 3, xrceth(xs2), bytes(8),
           ackreq=True)
    drops += 1
    got = p.answers(2.0, lambda g: len(g) >= 1)
    check([(g[0], g[2], g[3][:1]) for g in got] ==
          [(XRC | ACK, psn + 3, b"\x61")],
          "XRC target: an SRQ of another domain at the PSN expected gets "
          "an Invalid Request NAK (%s)" %
          [(hex(g[0]), g[2], g[3][:1].hex()) for g in got])

    print("expect rx_dropped=%d rx_errors=%d rx_icrc_errors=%d "
          "seq_err_nak_sent=1 duplicate_requests=3 rx_packets=%d tx_dropped=0"
          % (drops, errors, icrc_errors, used))
    print("want %d=%d:%08x %d=%d:%08x %d=%d:%08x %d=%d:%08x" %
          (live, len(s), fnv1a(s), ud, 40 + len(u), fnv1a(u),
           uc, len(c), fnv1a(c), xtgt, len(x), fnv1a(x)))
    print("sent %d" % p.sent)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
