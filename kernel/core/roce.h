/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * The vroce protocol core: pure, allocation-free RoCEv2 wire logic shared
 * by the kernel module and the host unit tests. One header per concern:
 *
 *   types.h   fixed-width types, error codes
 *   be.h      big-endian loads and stores
 *   hdr.h     BTH and extension headers: pack, parse
 *   aeth.h    AETH syndromes (ACK, RNR NAK, NAK), RNR timer codes
 *   opcode.h  opcode table: headers, flags, position of every opcode
 *   pkt.h     whole transport packet parse (BTH .. ICRC)
 *   ipudp.h   IPv4/IPv6 + UDP encapsulation, UDP source port
 *   crc32.h   the CRC-32 primitive the environment must provide
 *   icrc.h    the RoCEv2 invariant CRC
 *   psn.h     24-bit PSN arithmetic
 *   mtu.h     IB MTU enum, bytes, and the MTU for a netdev
 *   qp_state.h QP states and the Modify QP transition/attribute rules
 *   ring.h    shared ring index arithmetic, untrusted peer index checks
 *   key.h     MR/MW keys, remote range and access flag checks
 *   ack.h     RC acknowledgement requests and the requester's window
 *   rtt.h     round-trip estimate of the retransmit timer
 */
#ifndef VROCE_CORE_ROCE_H
#define VROCE_CORE_ROCE_H

#include "types.h"
#include "be.h"
#include "hdr.h"
#include "aeth.h"
#include "opcode.h"
#include "pkt.h"
#include "ipudp.h"
#include "crc32.h"
#include "icrc.h"
#include "psn.h"
#include "mtu.h"
#include "qp_state.h"
#include "ring.h"
#include "key.h"
#include "ack.h"
#include "rtt.h"
#include "rdres.h"

#endif /* VROCE_CORE_ROCE_H */
