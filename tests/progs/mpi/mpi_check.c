// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Two MPI ranks, checked: a ping-pong of 8 B to 1 MiB messages whose
 * every byte is verified at both ends (rank 1 answers with each byte
 * transformed, so an echo of stale data fails), then MPI_Allreduce sums
 * of 64-bit integers checked against the closed form. Rank 0 prints one
 * line per step ("mpi_check: ..."); any mismatch aborts the job with a
 * non-zero status. Run by tests/vm/88-openmpi-pair.sh over UCX on vroce.
 *
 * Copyright (c) the vroce developers
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static unsigned char pattern(size_t i, int iter)
{
	return (unsigned char)(i * 131 + (size_t)iter * 7 + (i >> 8));
}

static void fail(const char *what, size_t len, int iter, size_t at)
{
	fprintf(stderr, "mpi_check: rank %d: %s: %zu-byte message %d, byte %zu wrong\n",
		rank, what, len, iter, at);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Checks @buf against the pattern of @iter, each byte XORed with @x. */
static void check(const unsigned char *buf, size_t len, int iter,
		  unsigned char x, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (pattern(i, iter) ^ x))
			fail(what, len, iter, i);
}

static void pingpong(unsigned char *buf, size_t len, int iters)
{
	double t0, us;
	size_t i;
	int iter;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (iter = 0; iter < iters; iter++) {
		if (rank == 0) {
			for (i = 0; i < len; i++)
				buf[i] = pattern(i, iter);
			MPI_Send(buf, (int)len, MPI_BYTE, 1, iter, MPI_COMM_WORLD);
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, 1, iter, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, len, iter, 0x5a, "answer");
		} else {
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, 0, iter, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			check(buf, len, iter, 0, "request");
			for (i = 0; i < len; i++)
				buf[i] ^= 0x5a;
			MPI_Send(buf, (int)len, MPI_BYTE, 0, iter, MPI_COMM_WORLD);
		}
	}
	us = (MPI_Wtime() - t0) * 1e6 / iters / 2;
	if (rank == 0)
		printf("mpi_check: ping-pong %zu B x %d checked, %.1f us one way, %.2f MB/s\n",
		       len, iters, us, len / us);
}

static void allreduce(int size, int n)
{
	int64_t *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
	int64_t want;
	int i;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 3);
	for (i = 0; i < n; i++)
		in[i] = (int64_t)i * (rank + 1) + rank;
	MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++) {
		/* sum over r of i * (r + 1) + r */
		want = (int64_t)i * size * (size + 1) / 2 +
		       (int64_t)size * (size - 1) / 2;
		if (out[i] != want) {
			fprintf(stderr, "mpi_check: rank %d: allreduce[%d] = %lld, want %lld\n",
				rank, i, (long long)out[i], (long long)want);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (rank == 0)
		printf("mpi_check: allreduce of %d int64 over %d ranks checked\n",
		       n, size);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	static const size_t lens[] = { 8, 4096, 65536, 1 << 20 };
	char host[MPI_MAX_PROCESSOR_NAME];
	unsigned char *buf;
	int size, hlen;
	size_t k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &hlen);
	printf("mpi_check: rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks, has %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	buf = malloc(1 << 20);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 3);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		pingpong(buf, lens[k], lens[k] >= 65536 ? 20 : 200);
	allreduce(size, 1 << 16);
	free(buf);
	MPI_Finalize();
	return 0;
}
