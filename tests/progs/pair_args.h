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

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

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

/* A two-host program for pair_main(): set up on DEV, then serve or drive. */
struct pair_prog {
	const char *name;
	const char *objects;	/* what setup makes, for the TAP line */
	int port;		/* the default port */
	int (*setup)(const char *dev, int gid);
	int (*server)(int port);
	int (*client)(const char *peer, int port);
};

/*
 * The main() of @p: PROG -d DEV -g GIDIDX [-p PORT] [-s | PEER]. A failed
 * setup is a TAP failure for the client, exit status 1 for the server.
 */
static inline int pair_main(int argc, char **argv, const struct pair_prog *p)
{
	struct pair_args a = { .dev = "vroce0", .port = p->port };
	char usage[128];

	snprintf(usage, sizeof(usage),
		 "%s -d DEV -g GIDIDX [-p PORT] [-s | PEER]", p->name);
	if (pair_args_parse(argc, argv, usage, &a))
		return 2;
	if (p->setup(a.dev, a.gid)) {
		fprintf(stderr, "%s: cannot set up %s: %s\n", p->name, a.dev,
			strerror(errno));
		if (a.srv)
			return 1;
		tap_ok(0, "%s: %s", a.dev, p->objects);
		return tap_done();
	}
	if (a.srv)
		return p->server(a.port);
	if (!a.peer) {
		fprintf(stderr, "%s: a PEER or -s\n", p->name);
		return 2;
	}
	return p->client(a.peer, a.port);
}

#endif /* VROCE_PAIR_ARGS_H */
