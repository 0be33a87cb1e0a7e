// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * process_mad: the port's Performance Management agent, for local queries
 * only. ib_core reads /sys/class/infiniband/DEV/ports/1/counters/ by
 * handing us a PMA Get with no work completion (in_wc NULL): ClassPortInfo
 * once, when the port registers, to learn that the extended counters
 * exist, then PortCounters and PortCountersExtended on every read. They
 * are answered from the counters `rdma statistic` shows (counters.c):
 *
 *   PortXmitData, PortRcvData   tx_bytes / 4, rx_bytes / 4, rounded down:
 *                               payload octets, as in tx_bytes, without
 *                               the headers, pad and ICRC
 *   PortXmitPkts                tx_packets
 *   PortRcvPkts                 rx_packets + rx_dropped (IBTA counts the
 *                               packets that carried errors too)
 *   PortRcvErrors               rx_dropped: every packet dropped before it
 *                               reached a QP, rx_icrc_errors among them
 *   Multicast{Xmit,Rcv}Pkts     mcast_tx_packets, mcast_rx_packets: UD
 *                               datagrams for QP 0xFFFFFF (mcast.c)
 *   Unicast{Xmit,Rcv}Pkts       the packets less those
 *
 * The 32-bit and 16-bit fields of PortCounters stop at their largest
 * value, as IBTA says; the other PortCounters fields are zero. A local
 * Get of any other PMA attribute is answered with the status "unsupported
 * method/attribute". Every MAD that arrived on QP1 (in_wc set; rdma_cm's
 * CM MADs among them) and any other local MAD is left to the MAD layer.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>

#include "vroce.h"

static_assert(sizeof(struct ib_pma_mad) == sizeof(struct ib_mad));

static u64 vroce_pma_read(struct vroce_dev *vdev, enum vroce_counter c)
{
	return atomic64_read(&vdev->counters[c]);
}

/* One read of every counter the PMA reports. */
struct vroce_pma_counts {
	u64 xmit_data;		/* in units of 4 octets */
	u64 rcv_data;
	u64 xmit_pkts;
	u64 rcv_pkts;
	u64 rcv_errors;
	u64 mcast_xmit_pkts;
	u64 mcast_rcv_pkts;
};

static void vroce_pma_counts(struct vroce_dev *vdev,
			     struct vroce_pma_counts *c)
{
	u64 dropped, errors;

	c->mcast_xmit_pkts = vroce_pma_read(vdev, VROCE_CNT_MCAST_TX_PACKETS);
	c->mcast_rcv_pkts = vroce_pma_read(vdev, VROCE_CNT_MCAST_RX_PACKETS);
	/*
	 * The multicast counts before the totals, which count a packet
	 * first: the unicast counts (their difference) never go below 0.
	 */
	smp_rmb();
	dropped = vroce_pma_read(vdev, VROCE_CNT_RX_DROPPED);
	/* Errors are bad packets, not the protocol's own discards. */
	errors = vroce_pma_read(vdev, VROCE_CNT_RX_ERRORS);

	c->xmit_data = vroce_pma_read(vdev, VROCE_CNT_TX_BYTES) >> 2;
	c->rcv_data = vroce_pma_read(vdev, VROCE_CNT_RX_BYTES) >> 2;
	c->xmit_pkts = vroce_pma_read(vdev, VROCE_CNT_TX_PACKETS);
	c->rcv_pkts = vroce_pma_read(vdev, VROCE_CNT_RX_PACKETS) + dropped;
	c->rcv_errors = errors;
}

static __be32 vroce_pma_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

static __be16 vroce_pma_sat16(u64 v)
{
	return cpu_to_be16(min_t(u64, v, U16_MAX));
}

static void vroce_pma_class_port_info(struct ib_class_port_info *cpi)
{
	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
}

static void vroce_pma_port_counters(struct vroce_dev *vdev,
				    struct ib_pma_portcounters *pc)
{
	struct vroce_pma_counts c;

	vroce_pma_counts(vdev, &c);
	pc->port_rcv_errors = vroce_pma_sat16(c.rcv_errors);
	pc->port_xmit_data = vroce_pma_sat32(c.xmit_data);
	pc->port_rcv_data = vroce_pma_sat32(c.rcv_data);
	pc->port_xmit_packets = vroce_pma_sat32(c.xmit_pkts);
	pc->port_rcv_packets = vroce_pma_sat32(c.rcv_pkts);
}

static void vroce_pma_port_counters_ext(struct vroce_dev *vdev,
					struct ib_pma_portcounters_ext *pc)
{
	struct vroce_pma_counts c;

	vroce_pma_counts(vdev, &c);
	pc->port_xmit_data = cpu_to_be64(c.xmit_data);
	pc->port_rcv_data = cpu_to_be64(c.rcv_data);
	pc->port_xmit_packets = cpu_to_be64(c.xmit_pkts);
	pc->port_rcv_packets = cpu_to_be64(c.rcv_pkts);
	pc->port_unicast_xmit_packets =
		cpu_to_be64(c.xmit_pkts - c.mcast_xmit_pkts);
	pc->port_unicast_rcv_packets =
		cpu_to_be64(c.rcv_pkts - c.mcast_rcv_pkts);
	pc->port_multicast_xmit_packets = cpu_to_be64(c.mcast_xmit_pkts);
	pc->port_multicast_rcv_packets = cpu_to_be64(c.mcast_rcv_pkts);
}

/*
 * Fills the attribute of a PMA Get into @out (zeroed) and returns the MAD
 * status. vroce has one port: PortSelect is echoed, not checked.
 */
static u16 vroce_pma_get(struct vroce_dev *vdev, const struct ib_pma_mad *in,
			 struct ib_pma_mad *out)
{
	const struct ib_pma_portcounters *sel = (const void *)in->data;

	if (in->mad_hdr.base_version != IB_MGMT_BASE_VERSION ||
	    in->mad_hdr.class_version != 1)
		return IB_MGMT_MAD_STATUS_BAD_VERSION;
	switch (in->mad_hdr.attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		vroce_pma_class_port_info((void *)out->data);
		return IB_MGMT_MAD_STATUS_SUCCESS;
	case IB_PMA_PORT_COUNTERS:
		vroce_pma_port_counters(vdev, (void *)out->data);
		break;
	case IB_PMA_PORT_COUNTERS_EXT:
		vroce_pma_port_counters_ext(vdev, (void *)out->data);
		break;
	default:
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	/* Both attributes start with PortSelect at the same offset. */
	((struct ib_pma_portcounters *)out->data)->port_select =
		sel->port_select;
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

int vroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	const struct ib_mad_hdr *hdr = &in->mad_hdr;
	u16 status;

	/* Not ours: the MAD layer carries on as without process_mad. */
	if (in_wc || hdr->mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    hdr->method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;
	if (port != VROCE_PORT || *out_mad_size < sizeof(*out))
		return IB_MAD_RESULT_FAILURE;

	memset(out, 0, sizeof(*out));
	status = vroce_pma_get(to_vdev(ibdev), (const void *)in, (void *)out);
	out->mad_hdr = *hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = cpu_to_be16(status);
	*out_mad_size = sizeof(*out);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
