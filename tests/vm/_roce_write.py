#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Crafted RC RDMA WRITE packets for 93-mr-dereg-peer.sh: a peer that
# starts a WRITE and does not finish it. IPv4, through a raw socket, with
# the ICRC of _icrc.py; payload bytes are i % 251 from the WRITE's start.
#
#   _roce_write.py first SRC DST QPN PSN RKEY VA LEN
#       send a WRITE First to QP QPN with PSN, a RETH (VA, RKEY, DMA
#       length LEN) and 1024 bytes of payload
#   _roce_write.py middle SRC DST QPN PSN SECONDS
#       send the WRITE Middle that follows (1024 bytes, the WRITE's bytes
#       1024 to 2047) with PSN, then read UDP port 4791 packets for up to
#       SECONDS: print each BTH opcode and AETH syndrome, succeed if an
#       acknowledge with the syndrome of a remote access error NAK (0x62)
#       answered PSN
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _icrc import ROCE_PORT, icrc, recv_roce  # noqa: E402

OP_WRITE_FIRST = 0x06
OP_WRITE_MIDDLE = 0x07
OP_ACK = 0x11
SYN_NAK_REMOTE_ACCESS = 0x62
PAYLOAD = 1024


def datagram(src, dst, opcode, qpn, psn, ext, data):
    bth = struct.pack("!BBHII", opcode, 0, 0xffff, qpn & 0xffffff,
                      psn & 0xffffff)
    udp_len = 8 + len(bth) + len(ext) + len(data) + 4
    udp = struct.pack("!HHHH", 49999, ROCE_PORT, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, psn & 0xffff,
                     0x4000, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    pkt = ip + udp + bth + ext + data + b"\0\0\0\0"
    return pkt[:-4] + icrc(pkt)


def payload(start):
    return bytes((start + i) % 251 for i in range(PAYLOAD))


def send(pkt, dst):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.sendto(pkt, (dst, 0))


def first(src, dst, qpn, psn, rkey, va, length):
    reth = struct.pack("!QII", va, rkey, length)
    send(datagram(src, dst, OP_WRITE_FIRST, qpn, psn, reth, payload(0)),
         dst)
    return 0


def middle(src, dst, qpn, psn, seconds):
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    send(datagram(src, dst, OP_WRITE_MIDDLE, qpn, psn, b"",
                  payload(PAYLOAD)), dst)
    end = time.monotonic() + seconds
    while True:
        ip = recv_roce(r, end)
        if ip is None:
            print("no remote access error NAK for PSN %d" % psn)
            return 1
        ihl = (ip[0] & 0xf) * 4
        bth = ip[ihl + 8:ihl + 20]
        op = bth[0]
        rpsn = struct.unpack("!I", bth[8:12])[0] & 0xffffff
        syn = ip[ihl + 20] if op == OP_ACK else None
        print("opcode 0x%02x psn %d syndrome %s" %
              (op, rpsn, "-" if syn is None else "0x%02x" % syn))
        if op == OP_ACK and syn == SYN_NAK_REMOTE_ACCESS and rpsn == psn:
            return 0


def main(argv):
    if len(argv) == 9 and argv[1] == "first":
        return first(argv[2], argv[3], int(argv[4], 0), int(argv[5], 0),
                     int(argv[6], 0), int(argv[7], 0), int(argv[8], 0))
    if len(argv) == 7 and argv[1] == "middle":
        return middle(argv[2], argv[3], int(argv[4], 0), int(argv[5], 0),
                      float(argv[6]))
    print("usage: _roce_write.py first SRC DST QPN PSN RKEY VA LEN | "
          "middle SRC DST QPN PSN SECONDS", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
