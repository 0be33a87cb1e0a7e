// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (C) the vroce developers.
 *
 * The seed corpus of the fuzzer: every packet of the given pcap files
 * (the captures in tests/data, real RoCEv2 traffic of rdma_rxe and of
 * vroce), from its IP header on, one file each in the output directory,
 * named after the capture and the packet's number in it.
 *
 *   pcap2seeds OUTDIR FILE.pcap...
 *
 * Prints the number of seeds written; fails if a capture cannot be read
 * or holds no IP packet at all.
 */

#include <stdio.h>
#include <string.h>

#include "pcap.h"

static int write_seed(const char *dir, const char *pcap, unsigned int n,
		      const uint8_t *ip, size_t len)
{
	const char *base = strrchr(pcap, '/');
	char path[4096];
	size_t blen;
	FILE *fp;
	int ok;

	base = base ? base + 1 : pcap;
	blen = strlen(base);
	if (blen > 5 && strcmp(base + blen - 5, ".pcap") == 0)
		blen -= 5;
	snprintf(path, sizeof(path), "%s/%.*s-%04u", dir, (int)blen, base, n);
	fp = fopen(path, "wb");
	if (!fp) {
		fprintf(stderr, "pcap2seeds: cannot write %s\n", path);
		return -1;
	}
	ok = fwrite(ip, 1, len, fp) == len;
	if (fclose(fp) || !ok) {
		fprintf(stderr, "pcap2seeds: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* Writes the IP packets of @pcap; returns how many, or -1. */
static int extract(const char *dir, const char *pcap)
{
	struct pcap_file f;
	struct pcap_rec rec;
	unsigned int n = 0;
	uint16_t type;
	char err[512];
	long l3;
	int ret;

	if (pcap_open(&f, pcap, err, sizeof(err))) {
		fprintf(stderr, "pcap2seeds: %s\n", err);
		return -1;
	}
	while ((ret = pcap_next(&f, &rec)) == 1) {
		l3 = pcap_l3(f.linktype, rec.data, rec.caplen, &type);
		if (l3 < 0)
			continue;
		if (write_seed(dir, pcap, n, rec.data + l3,
			       rec.caplen - (size_t)l3)) {
			ret = -1;
			break;
		}
		n++;
	}
	pcap_close(&f);
	if (ret < 0) {
		fprintf(stderr, "pcap2seeds: %s: cut short or unwritable\n",
			pcap);
		return -1;
	}
	if (n == 0) {
		fprintf(stderr, "pcap2seeds: %s: no IP packet\n", pcap);
		return -1;
	}
	return (int)n;
}

int main(int argc, char **argv)
{
	int i, n, total = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pcap2seeds OUTDIR FILE.pcap...\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		n = extract(argv[1], argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	printf("%d\n", total);
	return 0;
}
