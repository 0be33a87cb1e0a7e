/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) the vroce developers
 *
 * Out-of-band exchange of the VM test programs: one TCP connection that
 * carries fixed-size messages of 16 big-endian 64-bit words plus one GID.
 * Every call has a time limit; nothing waits forever.
 */
#ifndef VROCE_XCHG_H
#define VROCE_XCHG_H

#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define XCHG_WORDS 16

struct xchg_msg {
	uint64_t v[XCHG_WORDS];
	uint8_t gid[16];
};

static inline long long xchg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void xchg_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A dual-stack (IPv4 and IPv6) listening socket on @port, or -1. */
static inline int xchg_listen(int port)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, one = 1, zero = 0;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Accepts one connection within @ms milliseconds, or -1 with errno set. */
static inline int xchg_accept(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int fd, one = 1, n = poll(&p, 1, ms);

	if (n != 1) {
		if (!n)
			errno = ETIMEDOUT;
		return -1;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * The server's side: listens on @port, says "listening on PORT" on stdout
 * (the VM tests wait for it) and accepts one connection within @ms
 * milliseconds; its socket, or -1 with errno set.
 */
static inline int xchg_serve(int port, int ms)
{
	int lfd = xchg_listen(port), fd, err;

	if (lfd < 0)
		return -1;
	printf("listening on %d\n", port);
	fflush(stdout);
	fd = xchg_accept(lfd, ms);
	err = errno;
	close(lfd);
	errno = err;
	return fd;
}

/* Connects to @host:@port, retrying for up to @ms milliseconds. */
static inline int xchg_connect(const char *host, int port, int ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	long long end = xchg_now_ms() + ms;
	char serv[16];
	int fd, one = 1;

	snprintf(serv, sizeof(serv), "%d", port);
	if (getaddrinfo(host, serv, &hints, &res))
		return -1;
	do {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				    ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				freeaddrinfo(res);
				return fd;
			}
			close(fd);
		}
		xchg_sleep_ms(200);
	} while (xchg_now_ms() < end);
	freeaddrinfo(res);
	return -1;
}

/* Moves exactly @len bytes, each direction within @ms milliseconds. */
static inline int xchg_io(int fd, void *buf, size_t len, int ms, int out)
{
	struct pollfd p = { .fd = fd, .events = out ? POLLOUT : POLLIN };
	long long end = xchg_now_ms() + ms;
	uint8_t *b = buf;
	ssize_t n;

	while (len) {
		int left = (int)(end - xchg_now_ms());

		if (left <= 0 || poll(&p, 1, left) != 1)
			return -1;
		n = out ? send(fd, b, len, MSG_NOSIGNAL) : recv(fd, b, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= n;
	}
	return 0;
}

static inline int xchg_send(int fd, const struct xchg_msg *m)
{
	struct xchg_msg w;
	int i;

	for (i = 0; i < XCHG_WORDS; i++)
		w.v[i] = htobe64(m->v[i]);
	memcpy(w.gid, m->gid, sizeof(w.gid));
	return xchg_io(fd, &w, sizeof(w), 10000, 1);
}

static inline int xchg_recv(int fd, struct xchg_msg *m, int ms)
{
	int i;

	if (xchg_io(fd, m, sizeof(*m), ms, 0))
		return -1;
	for (i = 0; i < XCHG_WORDS; i++)
		m->v[i] = be64toh(m->v[i]);
	return 0;
}

/*
 * A server's side of the exchange: takes one client on @port, then
 * answers each of its messages, in place, with @answer, until one whose
 * v[0] is @quit. 0 then; 1 if the client went away or was silent 120 s.
 */
static inline int xchg_serve_loop(int port, uint64_t quit,
				  void (*answer)(struct xchg_msg *m))
{
	struct xchg_msg m;
	int fd;

	fd = xchg_serve(port, 120000);
	if (fd < 0)
		return 1;
	for (;;) {
		if (xchg_recv(fd, &m, 120000))
			return 1;
		if (m.v[0] == quit)
			return 0;
		answer(&m);
		if (xchg_send(fd, &m))
			return 1;
	}
}

#endif /* VROCE_XCHG_H */
