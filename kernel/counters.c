// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Port counters, as `rdma statistic show` reads them (hw_counters).
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

static const struct rdma_stat_desc vroce_counter_descs[] = {
	[VROCE_CNT_TX_PACKETS] = { .name = "tx_packets" },
	[VROCE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[VROCE_CNT_RX_PACKETS] = { .name = "rx_packets" },
	[VROCE_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[VROCE_CNT_RX_ICRC_ERRORS] = { .name = "rx_icrc_errors" },
	[VROCE_CNT_RX_DROPPED] = { .name = "rx_dropped" },
	[VROCE_CNT_DOORBELLS] = { .name = "doorbells" },
	[VROCE_CNT_RETRANSMITS] = { .name = "retransmits" },
	[VROCE_CNT_TIMEOUTS] = { .name = "retry_timeouts" },
	[VROCE_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[VROCE_CNT_RNR_NAK_RCVD] = { .name = "rnr_nak_rcvd" },
	[VROCE_CNT_SEQ_NAK_SENT] = { .name = "seq_err_nak_sent" },
	[VROCE_CNT_SEQ_NAK_RCVD] = { .name = "seq_err_nak_rcvd" },
	[VROCE_CNT_DUP_REQUESTS] = { .name = "duplicate_requests" },
	[VROCE_CNT_RD_ATOMIC_OVER] = { .name = "rd_atomic_exceeded" },
	[VROCE_CNT_TX_BATCHES] = { .name = "tx_batches" },
	[VROCE_CNT_TX_LOCAL] = { .name = "tx_local" },
	[VROCE_CNT_RX_GRO_PACKETS] = { .name = "rx_gro_packets" },
	[VROCE_CNT_RX_ERRORS] = { .name = "rx_errors" },
	[VROCE_CNT_TX_DROPPED] = { .name = "tx_dropped" },
	[VROCE_CNT_TX_WAKEUPS] = { .name = "tx_wakeups" },
	[VROCE_CNT_MCAST_TX_PACKETS] = { .name = "mcast_tx_packets" },
	[VROCE_CNT_MCAST_RX_PACKETS] = { .name = "mcast_rx_packets" },
	[VROCE_CNT_ODP_FAULTS] = { .name = "odp_faults" },
	[VROCE_CNT_ODP_INVALIDATIONS] = { .name = "odp_invalidations" },
};

static_assert(ARRAY_SIZE(vroce_counter_descs) == VROCE_CNT_MAX);

struct rdma_hw_stats *vroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(vroce_counter_descs, VROCE_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int vroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct vroce_dev *vdev = to_vdev(ibdev);
	int i;

	for (i = 0; i < VROCE_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&vdev->counters[i]);
	return VROCE_CNT_MAX;
}
