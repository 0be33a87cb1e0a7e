/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (C) the vroce developers.
 *
 * Minimal reader of classic libpcap files (not pcapng), enough to pull
 * RoCEv2 packets out of tcpdump captures. No libpcap dependency.
 */
#ifndef VROCE_TEST_PCAP_H
#define VROCE_TEST_PCAP_H

#include <stddef.h>
#include <stdint.h>

#define PCAP_LINKTYPE_ETHERNET	1
#define PCAP_LINKTYPE_RAW	101
#define PCAP_LINKTYPE_SLL	113	/* tcpdump -i any, older */
#define PCAP_LINKTYPE_SLL2	276	/* tcpdump -i any, newer */

struct pcap_file {
	uint8_t *data;		/* the whole file */
	size_t len;
	size_t off;		/* next record */
	int swapped;		/* file written with the other byte order */
	uint32_t linktype;
};

struct pcap_rec {
	const uint8_t *data;
	uint32_t caplen;	/* bytes present */
	uint32_t origlen;	/* bytes on the wire */
};

/*
 * Read @path. Returns 0, or -1 with a reason in @err (unreadable, not a
 * classic pcap file, pcapng, ...).
 */
int pcap_open(struct pcap_file *f, const char *path, char *err, size_t errlen);

/* Next record: 1 if one was read, 0 at the end, -1 if the file is cut. */
int pcap_next(struct pcap_file *f, struct pcap_rec *rec);

void pcap_close(struct pcap_file *f);

/*
 * Locate the IP header in a frame of link type @linktype (Ethernet with
 * any number of 802.1Q/802.1ad tags, Linux cooked v1/v2, raw IP). Returns
 * its offset and stores the EtherType (0x0800 / 0x86dd) in @ethertype,
 * or returns -1 for frames that are not IP or are too short.
 */
long pcap_l3(uint32_t linktype, const uint8_t *frame, size_t len,
	     uint16_t *ethertype);

#endif /* VROCE_TEST_PCAP_H */
