/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * The command line the test programs share that run as a server (-s) in
 * one VM and as a client of PEER in the other, or alone:
 *   PROG -d DEV [-g GIDIDX] [-p PORT] [-s | PEER]
 */
#ifndef VROCE_PAIR_ARGS_H
#define VROCE_PAIR_ARGS_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

struct pair_args {
	const char *dev;
	int gid;
	int port;
	int srv;
	const char *peer;	/* NULL if none was given */
};

/*
 * Parses the command line into @a, which holds the defaults; 0, or 2
 * (the exit status) after printing "usage: @usage".
 */
static inline int pair_args_parse(int argc, char **argv, const char *usage,
				  struct pair_args *a)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:g:p:s")) != -1) {
		switch (opt) {
		case 'd':
			a->dev = optarg;
			break;
		case 'g':
			a->gid = atoi(optarg);
			break;
		case 'p':
			a->port = atoi(optarg);
			break;
		case 's':
			a->srv = 1;
			break;
		default:
			fprintf(stderr, "usage: %s\n", usage);
			return 2;
		}
	}
	a->peer = optind < argc ? argv[optind] : NULL;
	return 0;
}

#endif /* VROCE_PAIR_ARGS_H */
