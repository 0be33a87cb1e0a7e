#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The capture side of 94-stale-bytes.sh, run in the peer's network
# namespace: reads the RoCEv2 packets that reach it (IPv4, raw UDP
# socket) until the file STOP exists and a second passes with nothing
# more, or SECONDS pass, and checks every
# UD SEND Only and RC SEND Only of 1 to 3 bytes (the ones that carry pad
# bytes) the way a receiver that trusts nothing would: the ICRC, each
# payload byte 0x11, each pad byte 0, the BTH's reserved byte and bits
# and, for UD, the DETH's reserved byte 0. Prints one line per kind and
# the first few bad packets; exits 0 only if at least UD_MIN UD and
# RC_MIN RC ones came and none was bad.
#
#   _stale_bytes.py STOP SECONDS UD_MIN RC_MIN
#
# Prints "listening" (flushed) once its socket is open.
import ctypes
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _icrc import icrc, recv_roce  # noqa: E402

OP_RC_SEND_ONLY = 0x04
OP_UD_SEND_ONLY = 0x64
SMALL = 0x11
SO_RCVBUFFORCE = 33             # Linux; the socket module lacks these
SO_ATTACH_FILTER = 26
SMALL_IP_LEN = 200


def keep_small_only(s):
    """A socket filter on s that drops packets longer than SMALL_IP_LEN
    as they arrive: a queued copy of a big one would hold its skb head,
    so the sender's page could not be used again while it waits here."""
    insns = [(0x80, 0, 0, 0),                 # A = packet length
             (0x25, 0, 1, SMALL_IP_LEN),      # if A > SMALL_IP_LEN
             (0x06, 0, 0, 0),                 #   drop
             (0x06, 0, 0, 0xffff)]            # else keep
    code = ctypes.create_string_buffer(
        b"".join(struct.pack("HBBI", *i) for i in insns))
    s.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER,
                 struct.pack("HL", len(insns), ctypes.addressof(code)))
    return code


def problems(ip):
    """What is wrong with a small SEND Only packet ip ("" if nothing),
    and its kind ("ud", "rc") or None for a packet this test skips."""
    ihl = (ip[0] & 0xf) * 4
    bth = ip[ihl + 8:ihl + 20]
    op = bth[0]
    if op not in (OP_RC_SEND_ONLY, OP_UD_SEND_ONLY):
        return "", None
    kind = "ud" if op == OP_UD_SEND_ONLY else "rc"
    start = ihl + 20 + (8 if kind == "ud" else 0)
    pad = (bth[1] >> 4) & 3
    end = len(ip) - 4 - pad
    if not 1 <= end - start <= 3:
        return "", None
    bad = []
    if ip[-4:] != icrc(ip):
        bad.append("ICRC")
    if any(b != SMALL for b in ip[start:end]):
        bad.append("payload %s" % ip[start:end].hex())
    if any(ip[end:end + pad]):
        bad.append("pad %s" % ip[end:end + pad].hex())
    if bth[1] & 0x0f or bth[4] or bth[8] & 0x7f:
        bad.append("BTH reserved %s" % bth.hex())
    if kind == "ud" and ip[ihl + 20 + 4]:
        bad.append("DETH reserved %s" % ip[ihl + 20:ihl + 28].hex())
    return ", ".join(bad), kind


def main(argv):
    if len(argv) != 5:
        print("usage: _stale_bytes.py STOP SECONDS UD_MIN RC_MIN",
              file=sys.stderr)
        return 2
    stop, seconds = argv[1], float(argv[2])
    want = {"ud": int(argv[3]), "rc": int(argv[4])}
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20)
    code = keep_small_only(s)
    print("listening", flush=True)
    seen = {"ud": 0, "rc": 0}
    bad = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ip = recv_roce(s, min(end, time.monotonic() + 1))
        if ip is None:
            if os.path.exists(stop):
                break           # and nothing came for a second
            continue
        why, kind = problems(ip)
        if kind:
            seen[kind] += 1
        if why:
            bad.append("%s: %s" % (kind, why))
    for kind in ("ud", "rc"):
        print("%s: %d small SENDs (at least %d wanted)" %
              (kind, seen[kind], want[kind]))
    print("%d bad%s" % (len(bad), "".join("; " + b for b in bad[:5])))
    del code
    ok = not bad and all(seen[k] >= want[k] for k in want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
