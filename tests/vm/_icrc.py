#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# RoCEv2 ICRCs computed here, independently of any kernel code (zlib's
# CRC-32 over the masked headers and the payload), for 77-icrc-impl.sh:
#
#   _icrc.py send SRC DST GOOD BAD
#       send GOOD RC SEND Only packets (to QP 0x11, payloads of 16 to
#       1400 bytes) with a right ICRC, then BAD with a wrong one, from
#       IPv4 address SRC to DST, through a raw socket (so the IP header,
#       which the ICRC covers, is ours)
#   _icrc.py ud SRC DST QPN QKEY PKEY COUNT
#       send COUNT UD SEND Only packets with a right ICRC, P_Key PKEY and
#       Q_Key QKEY, each with a 256-byte payload of zeros, to QP QPN
#   _icrc.py capture COUNT SECONDS
#       read UDP port 4791 IPv4 packets for up to SECONDS (or until COUNT
#       came), check each ICRC; prints "N right, M wrong" and succeeds if
#       at least one came and none was wrong
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
SIZES = (16, 100, 1000, 1400)


def icrc(ip):
    """The ICRC of the IPv4 packet ip (its last 4 bytes excluded)."""
    ihl = (ip[0] & 0xf) * 4
    m = bytearray(b"\xff" * 8) + bytearray(ip[:-4])
    for off in (1, 8, 10, 11):             # TOS, TTL, header checksum
        m[8 + off] = 0xff
    m[8 + ihl + 6] = m[8 + ihl + 7] = 0xff  # UDP checksum
    m[8 + ihl + 8 + 4] = 0xff               # BTH reserved byte
    return struct.pack("<I", zlib.crc32(bytes(m)))


def packet(src, dst, n, ident, good):
    bth = bytes([0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, ident & 0xff])
    payload = bytes((i * 7 + ident) & 0xff for i in range(n))
    udp_len = 8 + len(bth) + n + 4
    udp = struct.pack("!HHHH", 49152 + ident, ROCE_PORT, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, ident, 0x4000,
                     64, socket.IPPROTO_UDP, 0, socket.inet_aton(src),
                     socket.inet_aton(dst))
    pkt = ip + udp + bth + payload + b"\0\0\0\0"
    crc = icrc(pkt)
    if not good:
        crc = bytes([crc[0] ^ 1]) + crc[1:]
    return pkt[:-4] + crc


def ud_packet(src, dst, qpn, qkey, pkey, ident):
    bth = struct.pack("!BBHII", 0x64, 0, pkey, qpn & 0xffffff, ident)
    deth = struct.pack("!II", qkey, 2)
    payload = bytes(256)
    udp_len = 8 + len(bth) + len(deth) + len(payload) + 4
    udp = struct.pack("!HHHH", 49152 + ident, ROCE_PORT, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, ident, 0x4000,
                     64, socket.IPPROTO_UDP, 0, socket.inet_aton(src),
                     socket.inet_aton(dst))
    pkt = ip + udp + bth + deth + payload + b"\0\0\0\0"
    return pkt[:-4] + icrc(pkt)


def send_ud(src, dst, qpn, qkey, pkey, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for i in range(count):
        s.sendto(ud_packet(src, dst, qpn, qkey, pkey, i + 1), (dst, 0))
    return 0


def send(src, dst, good, bad):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for i in range(good + bad):
        n = SIZES[i % len(SIZES)]
        s.sendto(packet(src, dst, n, i + 1, i < good), (dst, 0))
    return 0


def recv_roce(s, end):
    """The next IPv4 packet to UDP port 4791 that the raw UDP socket s
    reads before time.monotonic() reaches end, or None."""
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            ip = s.recv(65536)
        except socket.timeout:
            return None
        ihl = (ip[0] & 0xf) * 4
        if struct.unpack("!H", ip[ihl + 2:ihl + 4])[0] == ROCE_PORT:
            return ip


def capture(count, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
    end = time.monotonic() + seconds
    right = wrong = 0
    while right + wrong < count:
        ip = recv_roce(s, end)
        if ip is None:
            break
        if icrc(ip) == ip[-4:]:
            right += 1
        else:
            wrong += 1
        print("%d bytes, ICRC %s" % (len(ip), ip[-4:].hex()), flush=True)
    print("%d right, %d wrong" % (right, wrong))
    return 0 if right and not wrong else 1


def main(argv):
    if len(argv) == 6 and argv[1] == "send":
        return send(argv[2], argv[3], int(argv[4]), int(argv[5]))
    if len(argv) == 8 and argv[1] == "ud":
        return send_ud(argv[2], argv[3], int(argv[4], 0), int(argv[5], 0),
                       int(argv[6], 0), int(argv[7]))
    if len(argv) == 4 and argv[1] == "capture":
        return capture(int(argv[2]), float(argv[3]))
    print("usage: _icrc.py send SRC DST GOOD BAD | "
          "ud SRC DST QPN QKEY PKEY COUNT | capture COUNT SECONDS",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
