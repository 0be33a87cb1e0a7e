// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * Classic pcap reader; see pcap.h.
 *
 * File layout: a 24-byte global header (magic, version 2.4, zone, sigfigs,
 * snaplen, link type), then records of a 16-byte header (seconds,
 * sub-seconds, captured length, original length) and the captured bytes.
 * All header fields are in the byte order of the writer, told by the magic.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap.h"

#define MAGIC_US	0xa1b2c3d4u
#define MAGIC_NS	0xa1b23c4du
#define MAGIC_PCAPNG	0x0a0d0d0au

#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86dd
#define ETH_P_8021Q	0x8100
#define ETH_P_8021AD	0x88a8

static uint32_t rd32(const struct pcap_file *f, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	if (f->swapped)
		v = __builtin_bswap32(v);
	return v;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int pcap_open(struct pcap_file *f, const char *path, char *err, size_t errlen)
{
	FILE *fp;
	long size;
	uint32_t magic;

	memset(f, 0, sizeof(*f));
	fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	size = fseek(fp, 0, SEEK_END) ? -1 : ftell(fp);
	if (size < 0 || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		snprintf(err, errlen, "%s: cannot size", path);
		return -1;
	}
	f->data = malloc(size ? (size_t)size : 1);
	if (!f->data || fread(f->data, 1, (size_t)size, fp) != (size_t)size) {
		fclose(fp);
		pcap_close(f);
		snprintf(err, errlen, "%s: cannot read", path);
		return -1;
	}
	fclose(fp);
	f->len = (size_t)size;

	if (f->len < 24) {
		snprintf(err, errlen, "%s: too short for a pcap header", path);
		goto bad;
	}
	memcpy(&magic, f->data, 4);
	if (magic == MAGIC_PCAPNG) {
		snprintf(err, errlen,
			 "%s: pcapng, not classic pcap (tcpdump -w writes classic pcap; convert with editcap -F pcap)",
			 path);
		goto bad;
	}
	if (magic == MAGIC_US || magic == MAGIC_NS) {
		f->swapped = 0;
	} else if (__builtin_bswap32(magic) == MAGIC_US ||
		   __builtin_bswap32(magic) == MAGIC_NS) {
		f->swapped = 1;
	} else {
		snprintf(err, errlen, "%s: bad magic 0x%08x", path, magic);
		goto bad;
	}
	f->linktype = rd32(f, f->data + 20) & 0xffff;
	f->off = 24;
	return 0;
bad:
	pcap_close(f);
	return -1;
}

int pcap_next(struct pcap_file *f, struct pcap_rec *rec)
{
	uint32_t caplen;

	if (f->off == f->len)
		return 0;
	if (f->len - f->off < 16)
		return -1;
	caplen = rd32(f, f->data + f->off + 8);
	if (f->len - f->off - 16 < caplen)
		return -1;
	rec->caplen = caplen;
	rec->origlen = rd32(f, f->data + f->off + 12);
	rec->data = f->data + f->off + 16;
	f->off += 16 + (size_t)caplen;
	return 1;
}

void pcap_close(struct pcap_file *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}

long pcap_l3(uint32_t linktype, const uint8_t *frame, size_t len,
	     uint16_t *ethertype)
{
	size_t off;
	uint16_t type;

	switch (linktype) {
	case PCAP_LINKTYPE_ETHERNET:
		if (len < 14)
			return -1;
		off = 12;
		type = be16(frame + off);
		while (type == ETH_P_8021Q || type == ETH_P_8021AD) {
			off += 4;
			if (len < off + 2)
				return -1;
			type = be16(frame + off);
		}
		off += 2;
		break;
	case PCAP_LINKTYPE_SLL:
		if (len < 16)
			return -1;
		type = be16(frame + 14);
		off = 16;
		break;
	case PCAP_LINKTYPE_SLL2:
		if (len < 20)
			return -1;
		type = be16(frame);
		off = 20;
		break;
	case PCAP_LINKTYPE_RAW:
		if (len < 1)
			return -1;
		type = (frame[0] >> 4) == 6 ? ETH_P_IPV6 : ETH_P_IP;
		off = 0;
		break;
	default:
		return -1;
	}
	if (type != ETH_P_IP && type != ETH_P_IPV6)
		return -1;
	if (off >= len)
		return -1;
	*ethertype = type;
	return (long)off;
}
