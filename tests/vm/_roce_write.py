#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# Crafted RC RDMA WRITE and SEND packets for 93-mr-dereg-peer.sh: a peer
# that starts a message and finishes it only after the victim has
# deregistered the memory it goes to. IPv4, through a raw socket, with
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
#   _roce_write.py send-first SRC DST QPN PSN
#       send a SEND First with PSN and 1024 bytes of payload
#   _roce_write.py send-last SRC DST QPN PSN SECONDS
#       send the SEND Last that follows (the SEND's bytes 1024 to 2047),
#       then as "middle", but succeed on a remote operational error NAK
#       (0x63)
#   _roce_write.py read SRC DST QPN PSN RKEY VA LEN SECONDS
#       send an RDMA READ Request for LEN bytes at VA, then count the READ
#       responses for up to SECONDS: succeed if, after at least one
#       response and before the last one, a remote access error NAK
#       (0x62) ends the READ; prints "first response" (flushed) when the
#       first one comes, for the caller to deregister the MR only then
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _icrc import ROCE_PORT, icrc, recv_roce  # noqa: E402

OP_SEND_FIRST = 0x00
OP_SEND_LAST = 0x02
OP_WRITE_FIRST = 0x06
OP_WRITE_MIDDLE = 0x07
OP_READ_REQ = 0x0c
OP_READ_RESP_FIRST = 0x0d
OP_READ_RESP_ONLY = 0x10
OP_ACK = 0x11
SYN_NAK_REMOTE_ACCESS = 0x62
SYN_NAK_REMOTE_OP = 0x63
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


def send_first(src, dst, qpn, psn):
    send(datagram(src, dst, OP_SEND_FIRST, qpn, psn, b"", payload(0)), dst)
    return 0


def answered(src, dst, opcode, qpn, psn, seconds, syndrome):
    """Sends packet OPCODE with the payload's second 1024 bytes at PSN and
    waits up to SECONDS for a NAK with SYNDROME that answers PSN."""
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    send(datagram(src, dst, opcode, qpn, psn, b"", payload(PAYLOAD)), dst)
    end = time.monotonic() + seconds
    while True:
        ip = recv_roce(r, end)
        if ip is None:
            print("no NAK with syndrome 0x%02x for PSN %d" % (syndrome, psn))
            return 1
        ihl = (ip[0] & 0xf) * 4
        bth = ip[ihl + 8:ihl + 20]
        op = bth[0]
        rpsn = struct.unpack("!I", bth[8:12])[0] & 0xffffff
        syn = ip[ihl + 20] if op == OP_ACK else None
        print("opcode 0x%02x psn %d syndrome %s" %
              (op, rpsn, "-" if syn is None else "0x%02x" % syn))
        if op == OP_ACK and syn == syndrome and rpsn == psn:
            return 0


def read(src, dst, qpn, psn, rkey, va, length, seconds):
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    reth = struct.pack("!QII", va, rkey, length)
    send(datagram(src, dst, OP_READ_REQ, qpn, psn, reth, b""), dst)
    npkts = (length + PAYLOAD - 1) // PAYLOAD
    responses = 0
    end = time.monotonic() + seconds
    while True:
        ip = recv_roce(r, end)
        if ip is None:
            print("%d of %d READ responses, then nothing" %
                  (responses, npkts))
            return 1
        ihl = (ip[0] & 0xf) * 4
        bth = ip[ihl + 8:ihl + 20]
        op = bth[0]
        rpsn = struct.unpack("!I", bth[8:12])[0] & 0xffffff
        if OP_READ_RESP_FIRST <= op <= OP_READ_RESP_ONLY:
            responses += 1
            if responses == 1:
                print("first response", flush=True)
            continue
        if op == OP_ACK:
            syn = ip[ihl + 20]
            print("%d of %d READ responses, then an ACK with syndrome "
                  "0x%02x for PSN %d" % (responses, npkts, syn, rpsn))
            return 0 if (syn == SYN_NAK_REMOTE_ACCESS and
                         0 < responses < npkts and
                         rpsn == (psn + responses) & 0xffffff) else 1


def main(argv):
    if len(argv) == 9 and argv[1] == "first":
        return first(argv[2], argv[3], int(argv[4], 0), int(argv[5], 0),
                     int(argv[6], 0), int(argv[7], 0), int(argv[8], 0))
    if len(argv) == 7 and argv[1] in ("middle", "send-last"):
        op, syn = ((OP_WRITE_MIDDLE, SYN_NAK_REMOTE_ACCESS)
                   if argv[1] == "middle" else
                   (OP_SEND_LAST, SYN_NAK_REMOTE_OP))
        return answered(argv[2], argv[3], op, int(argv[4], 0),
                        int(argv[5], 0), float(argv[6]), syn)
    if len(argv) == 10 and argv[1] == "read":
        return read(argv[2], argv[3], int(argv[4], 0), int(argv[5], 0),
                    int(argv[6], 0), int(argv[7], 0), int(argv[8], 0),
                    float(argv[9]))
    if len(argv) == 6 and argv[1] == "send-first":
        return send_first(argv[2], argv[3], int(argv[4], 0),
                          int(argv[5], 0))
    print("usage: _roce_write.py first SRC DST QPN PSN RKEY VA LEN | "
          "middle SRC DST QPN PSN SECONDS | send-first SRC DST QPN PSN | "
          "send-last SRC DST QPN PSN SECONDS | "
          "read SRC DST QPN PSN RKEY VA LEN SECONDS", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
