// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive path: a RoCEv2 packet arrives on our UDP socket (or from
 * our own transmit, for a local destination), its ICRC and headers are
 * checked, and it goes to the QP it names: UD receives are delivered
 * here, RC and UC requests go to the responder (resp.c) and RC responses
 * to the completer (comp.c). A connected QP takes packets only from the
 * peer its path names. An RC packet between local QPs that was never
 * built (local.c) enters at the header parse, with the same checks from
 * there on.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "vroce.h"
#include "vroce_trace.h"
#include "core/roce.h"

#define VROCE_GRH_LEN	40

/*
 * The QP numbered @qpn, with a reference; NULL if none. Lock-free: a QP
 * being destroyed has no reference left to take, and the count we look
 * at outlives the QP by a grace period (struct vroce_qp_ref).
 */
static struct vroce_qp *vroce_qp_get(struct vroce_dev *vdev, u32 qpn)
{
	struct vroce_qp_ref *ref;
	struct vroce_qp *qp = NULL;

	rcu_read_lock();
	ref = xa_load(&vdev->qps, qpn);
	if (ref && refcount_inc_not_zero(&ref->count))
		qp = ref->qp;
	rcu_read_unlock();
	return qp;
}

/* One more reference on @qp, for a caller that holds one already. */
void vroce_qp_hold(struct vroce_qp *qp)
{
	refcount_inc(&qp->ref->count);
}

void vroce_qp_put(struct vroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref->count))
		complete(&qp->released);
}

/*
 * Takes the next receive WQE of @qp (or its SRQ) into @wqe and @sge:
 * 1 if there is one, 0 if there is none, -1 if the one taken (its header
 * copied into @wqe) has more SGEs than its ring slot holds.
 */
int vroce_take_recv(struct vroce_qp *qp, struct vroce_recv_wqe *wqe,
		    struct vroce_sge *sge)
{
	struct vroce_srq *srq = qp->ibqp.srq ? to_vsrq(qp->ibqp.srq) :
				qp->resp.xsrq;
	struct vroce_queue *rq = srq ? &srq->rq : &qp->rq;
	spinlock_t *lock = srq ? &srq->lock : &qp->rq_lock;
	/* What the ring's stride holds: SGEs never reach the next slot. */
	u32 max_sge = srq ? srq->max_sge : qp->cap.max_recv_sge;
	bool limit = false;
	int got = 0;

	spin_lock_bh(lock);
	if (vroce_queue_produced(rq) > 0) {
		/* One copy of the WQE; only the copy is looked at. */
		memcpy(wqe, vroce_queue_slot(rq, rq->own), sizeof(*wqe));
		got = -1;
		if (wqe->num_sge <= max_sge) {
			memcpy(sge, vroce_queue_slot(rq, rq->own) + sizeof(*wqe),
			       wqe->num_sge * sizeof(*sge));
			got = 1;
		}
		rq->own++;
		vroce_queue_publish_cons(rq);
		if (srq)
			limit = vroce_srq_check_limit(srq);
	}
	spin_unlock_bh(lock);
	if (limit)
		vroce_srq_limit_event(srq);
	return got;
}

/* The 40 bytes a UD receive buffer starts with: the packet's IP header. */
static void vroce_grh(struct sk_buff *skb, u8 *grh, u8 *net_type)
{
	memset(grh, 0, VROCE_GRH_LEN);
	if (ip_hdr(skb)->version == 4) {
		memcpy(grh + 20, ip_hdr(skb), sizeof(struct iphdr));
		*net_type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
		*net_type = RDMA_NETWORK_IPV6;
	}
}

/*
 * The GRH and payload of a UD datagram into a receive's SGL: the IB_WC
 * status. An MR revoked meanwhile, or an ODP page not mapped (UD has no
 * RNR NAK to wait behind: it is faulted in for the next datagram), is a
 * local protection error.
 */
static u8 vroce_ud_recv_copy(struct vroce_sgl *sgl, const u8 *grh,
			     const struct vroce_pkt *pkt)
{
	int err = vroce_sgl_write(sgl, 0, grh, VROCE_GRH_LEN);

	if (!err)
		err = vroce_sgl_write_pkt(sgl, VROCE_GRH_LEN, pkt);
	if (err == -EAGAIN)
		vroce_sgl_odp_missed(sgl, 0, VROCE_GRH_LEN + pkt->paylen);
	return err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * A UD SEND: why it was dropped (a wrong Q_Key, a state that does not
 * receive, no receive WQE), or VROCE_DROP_NONE if it completed a receive
 * WQE.
 */
static enum vroce_drop vroce_rx_ud(struct vroce_qp *qp, struct sk_buff *skb,
				   const struct vroce_pkt *pkt, const u8 *bth)
{
	struct vroce_sge sge[VROCE_MAX_SGE];
	struct vroce_recv_wqe wqe;
	struct vroce_deth deth;
	struct vroce_cqe cqe = {};
	struct vroce_sgl sgl;
	u8 grh[VROCE_GRH_LEN];
	const u8 *imm;
	int len;

	if (vroce_deth_parse(&deth, vroce_pkt_hdr(pkt, bth, VROCE_HDR_DETH),
			     VROCE_DETH_LEN) < 0)
		return VROCE_DROP_HEADERS;
	if (deth.qkey != qp->attrs.qkey)
		return VROCE_DROP_QKEY;
	if (qp->attrs.state < IB_QPS_RTR || qp->attrs.state > IB_QPS_SQD)
		return VROCE_DROP_STATE;
	/* UD has no RNR: without a receive WQE the packet is dropped. */
	if (vroce_take_recv(qp, &wqe, sge) <= 0)
		return VROCE_DROP_NO_RECV;

	cqe.wr_id = wqe.wr_id;
	cqe.opcode = IB_WC_RECV;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.src_qp = deth.sqpn;
	cqe.flags = VROCE_CQE_GRH;
	cqe.byte_len = VROCE_GRH_LEN + pkt->paylen;
	imm = vroce_pkt_hdr(pkt, bth, VROCE_HDR_IMMDT);
	if (imm) {
		memcpy(&cqe.imm_data, imm, sizeof(cqe.imm_data));
		cqe.flags |= VROCE_CQE_WITH_IMM;
	}
	vroce_grh(skb, grh, &cqe.network_hdr_type);

	len = vroce_sgl_prepare(qp, &sgl, sge, wqe.num_sge,
				IB_ACCESS_LOCAL_WRITE);
	if (len < 0) {
		cqe.status = -len;
	} else {
		if (len < cqe.byte_len)
			cqe.status = IB_WC_LOC_LEN_ERR;
		else
			cqe.status = vroce_ud_recv_copy(&sgl, grh, pkt);
		vroce_sgl_release(&sgl);
	}
	vroce_cq_add(to_vcq(qp->ibqp.recv_cq), &cqe,
		     pkt->bth.se || cqe.status);
	return VROCE_DROP_NONE;
}

/*
 * A UD datagram for QP 0xFFFFFF: to every UD QP attached to the group its
 * destination address names (mcast.c), each with its own checks. Why it
 * was dropped if none took it.
 */
static enum vroce_drop vroce_rx_mcast(struct vroce_dev *vdev,
				      struct sk_buff *skb,
				      const struct vroce_pkt *pkt,
				      const u8 *bth)
{
	enum vroce_drop why = VROCE_DROP_NO_QP, d;
	u32 qpns[VROCE_MAX_MCAST_QP_ATTACH];
	struct in6_addr gid;
	struct vroce_qp *qp;
	u32 i, n;

	if (pkt->op->transport != VROCE_TRANSPORT_UD)
		return VROCE_DROP_TRANSPORT;
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &gid);
	else
		gid = ipv6_hdr(skb)->daddr;
	n = vroce_mcast_qpns(vdev, &gid, qpns);
	for (i = 0; i < n; i++) {
		qp = vroce_qp_get(vdev, qpns[i]);
		if (!qp)
			continue;
		d = qp->ibqp.qp_type == IB_QPT_UD ?
		    vroce_rx_ud(qp, skb, pkt, bth) : VROCE_DROP_TRANSPORT;
		vroce_qp_put(qp);
		if (why != VROCE_DROP_NONE)
			why = d;	/* one QP that took it is enough */
	}
	return why;
}

/*
 * A packet from IPv4 address @saddr4 or IPv6 @saddr6 is from @qp's peer.
 * @local: it came from this device, not off the wire. A QP whose peer is
 * on this device takes only such packets, which carry no ICRC: one off
 * the wire that claims an address of ours is not from its peer.
 */
static bool vroce_rx_from_addr(struct vroce_qp *qp, bool local, bool ipv4,
			       __be32 saddr4, const struct in6_addr *saddr6)
{
	const struct vroce_path *p = &qp->path;
	unsigned int seq;
	bool from;

	/* Only the fields it needs, consistent with each other. */
	do {
		seq = read_seqbegin(&qp->path_lock);
		if (p->loopback != local)
			from = false;
		else if (ipv4)
			from = p->ipv4 && saddr4 == p->dip4;
		else
			from = !p->ipv4 && ipv6_addr_equal(saddr6, &p->dgid);
	} while (read_seqretry(&qp->path_lock, seq));
	return from;
}

/* The packet comes from the peer of connected QP @qp. */
static bool vroce_rx_from_peer(struct vroce_qp *qp, struct sk_buff *skb,
			       bool local)
{
	if (ip_hdr(skb)->version == 4)
		return vroce_rx_from_addr(qp, local, true, ip_hdr(skb)->saddr,
					  NULL);
	return vroce_rx_from_addr(qp, local, false, 0,
				  &ipv6_hdr(skb)->saddr);
}

/* Whether a packet of @pkt's transport is for connected QP @qp. */
static bool vroce_rx_transport_ok(struct vroce_qp *qp,
				  const struct vroce_pkt *pkt)
{
	u8 transport = pkt->op->transport;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == VROCE_TRANSPORT_RC;
	case IB_QPT_UC:
		return transport == VROCE_TRANSPORT_UC;
	/* The two halves of XRC: one sends requests, the other answers. */
	case IB_QPT_XRC_INI:
		return transport == VROCE_TRANSPORT_XRC &&
		       (pkt->op->flags & VROCE_OPF_RESP);
	case IB_QPT_XRC_TGT:
		return transport == VROCE_TRANSPORT_XRC &&
		       (pkt->op->flags & VROCE_OPF_REQ);
	default:
		return false;
	}
}

/*
 * A request goes to the responder, a response to the completer:
 * VROCE_DROP_PROTOCOL unless the one it went to used it.
 */
static enum vroce_drop vroce_rx_connected(struct vroce_qp *qp,
					  const struct vroce_pkt *pkt,
					  const u8 *bth)
{
	bool used = false;

	if (pkt->op->flags & VROCE_OPF_REQ)
		used = vroce_resp_rx(qp, pkt, bth);
	else if (pkt->op->flags & VROCE_OPF_RESP)
		used = vroce_comp_rx(qp, pkt, bth);
	return used ? VROCE_DROP_NONE : VROCE_DROP_PROTOCOL;
}

/*
 * The packet goes to @qp (@local: from this device): why it was dropped,
 * or VROCE_DROP_NONE.
 */
static enum vroce_drop vroce_rx_deliver(struct vroce_qp *qp,
					struct sk_buff *skb,
					const struct vroce_pkt *pkt,
					const u8 *bth, bool local)
{
	if (qp->ibqp.qp_type == IB_QPT_GSI || qp->ibqp.qp_type == IB_QPT_UD) {
		if (pkt->bth.opcode == VROCE_OP_UD_SEND_ONLY ||
		    pkt->bth.opcode == VROCE_OP_UD_SEND_ONLY_IMM)
			return vroce_rx_ud(qp, skb, pkt, bth);
		return VROCE_DROP_TRANSPORT;
	}
	if (!vroce_rx_transport_ok(qp, pkt))
		return VROCE_DROP_TRANSPORT;
	if (!vroce_rx_from_peer(qp, skb, local))
		return VROCE_DROP_PEER;
	return vroce_rx_connected(qp, pkt, bth);
}

/*
 * @n received packets dropped, for @why: in rx_dropped, and in the
 * vroce_rx_drop event with what is known of them (@qpn U32_MAX and
 * @opcode -1 before their BTH was read).
 */
void vroce_rx_dropped(struct vroce_dev *vdev, u32 qpn, int opcode, u32 psn,
		      enum vroce_drop why, u32 n)
{
	vroce_count(vdev, VROCE_CNT_RX_DROPPED, n);
	trace_vroce_rx_drop(&vdev->ibdev, qpn, opcode, psn, why, n);
}

/*
 * A bad packet, dropped before any QP saw it (its ICRC, its headers, no
 * such QP, another P_Key; @pkt parsed or NULL): in rx_dropped, and in
 * rx_errors, the port's PortRcvErrors.
 */
static void vroce_rx_error(struct vroce_dev *vdev, const struct vroce_pkt *pkt,
			   enum vroce_drop why)
{
	vroce_count(vdev, VROCE_CNT_RX_ERRORS, 1);
	if (pkt)
		vroce_rx_dropped(vdev, pkt->bth.dqpn, pkt->bth.opcode,
				 pkt->bth.psn, why, 1);
	else
		vroce_rx_dropped(vdev, U32_MAX, -1, 0, why, 1);
}

/*
 * Every received packet counts once: in rx_packets (and its payload in
 * rx_bytes) if a QP used it, in rx_dropped (for @why) if not. True if it
 * was used.
 */
static bool vroce_rx_count(struct vroce_dev *vdev, const struct vroce_pkt *pkt,
			   enum vroce_drop why)
{
	if (why != VROCE_DROP_NONE) {
		vroce_rx_dropped(vdev, pkt->bth.dqpn, pkt->bth.opcode,
				 pkt->bth.psn, why, 1);
		return false;
	}
	vroce_count(vdev, VROCE_CNT_RX_PACKETS, 1);
	vroce_count(vdev, VROCE_CNT_RX_BYTES, pkt->paylen);
	return true;
}

/*
 * Makes UDP, BTH and the extension headers linear; the payload may stay
 * in page fragments.
 */
static bool vroce_rx_pull(struct sk_buff *skb)
{
	const struct vroce_opcode_info *op;
	u32 udp = sizeof(struct udphdr);

	if (!pskb_may_pull(skb, udp + VROCE_BTH_LEN))
		return false;
	op = vroce_opcode_info(skb->data[udp]);
	return op && pskb_may_pull(skb, udp + op->hdr_len);
}

/*
 * Checks the ICRC where the packet lies: linear, or with the payload in
 * fragments (walked in place, not copied).
 */
static bool vroce_rx_icrc_ok(struct sk_buff *skb)
{
	u8 *ip = skb_network_header(skb);
	u32 before = skb->data - ip, pos, n, end, crc;
	struct skb_seq_state st;
	u8 icrc[VROCE_ICRC_LEN];
	const u8 *p;
	int off;

	if (!skb_is_nonlinear(skb))
		return !vroce_icrc_verify(ip, skb_tail_pointer(skb) - ip);
	if (skb->len < sizeof(struct udphdr) + VROCE_BTH_LEN + VROCE_ICRC_LEN)
		return false;
	off = vroce_icrc_begin(&crc, ip, before + skb_headlen(skb));
	if (off < 0)
		return false;
	pos = off - before;
	end = skb->len - VROCE_ICRC_LEN;
	skb_prepare_seq_read(skb, pos, end, &st);
	/* A block may run past @end: the ICRC itself is not covered. */
	while (pos < end && (n = skb_seq_read(pos - (off - before), &p, &st))) {
		n = min(n, end - pos);
		crc = vroce_icrc_update(crc, p, n);
		pos += n;
	}
	skb_abort_seq_read(&st);
	if (skb_copy_bits(skb, end, icrc, VROCE_ICRC_LEN))
		return false;
	return vroce_icrc_get(icrc) == vroce_icrc_final(crc);
}

/*
 * One RoCEv2 packet, skb->data at its UDP header and the IP header
 * before it; @local: our own, for a GID of this device, never on a wire
 * and so without an ICRC. Consumes @skb.
 */
static int vroce_rx_packet(struct vroce_dev *vdev, struct sk_buff *skb,
			   bool local)
{
	struct vroce_rxpkt rx = { .skb = skb };
	struct vroce_pkt *pkt = &rx.pkt;
	struct vroce_qp *qp;
	const u8 *bth;

	if (!vroce_rx_pull(skb)) {
		vroce_rx_error(vdev, NULL, VROCE_DROP_HEADERS);
		goto out;
	}
	if (!local && !vroce_rx_icrc_ok(skb)) {
		vroce_count(vdev, VROCE_CNT_RX_ICRC_ERRORS, 1);
		vroce_rx_error(vdev, NULL, VROCE_DROP_ICRC);
		goto out;
	}
	bth = skb->data + sizeof(struct udphdr);
	if (vroce_pkt_parse(pkt, bth, skb->len - sizeof(struct udphdr)) < 0) {
		vroce_rx_error(vdev, NULL, VROCE_DROP_HEADERS);
		goto out;
	}
	rx.payoff = sizeof(struct udphdr) + pkt->hdr_len;
	if (pkt->bth.dqpn == VROCE_MCAST_QPN) {
		if (!vroce_pkey_match(pkt->bth.pkey, VROCE_DEFAULT_PKEY))
			vroce_rx_error(vdev, pkt, VROCE_DROP_PKEY);
		else if (vroce_rx_count(vdev, pkt,
					vroce_rx_mcast(vdev, skb, pkt, bth)))
			vroce_count(vdev, VROCE_CNT_MCAST_RX_PACKETS, 1);
		goto out;
	}
	qp = vroce_qp_get(vdev, pkt->bth.dqpn);
	if (!qp) {
		vroce_rx_error(vdev, pkt, VROCE_DROP_NO_QP);
		goto out;
	}
	/* The one P_Key of the table: every QP's pkey_index is 0. */
	if (!vroce_pkey_match(pkt->bth.pkey, VROCE_DEFAULT_PKEY)) {
		vroce_qp_put(qp);
		vroce_rx_error(vdev, pkt, VROCE_DROP_PKEY);
		goto out;
	}
	vroce_rx_count(vdev, pkt, vroce_rx_deliver(qp, skb, pkt, bth, local));
	vroce_qp_put(qp);
out:
	kfree_skb(skb);
	return 0;
}

int vroce_rx_local(struct vroce_dev *vdev, struct sk_buff *skb)
{
	return vroce_rx_packet(vdev, skb, true);
}

/*
 * A packet between local QPs that was never built (local.c), from a QP
 * whose path is @from: the checks of vroce_rx_packet() from the BTH on,
 * for a connected QP.
 */
void vroce_rx_local_pkt(struct vroce_dev *vdev, const struct vroce_path *from,
			const struct vroce_local_pkt *lp)
{
	struct vroce_rxpkt rx = { .local = lp };
	u32 len = lp->hdr_len + lp->paylen + vroce_pad_len(lp->paylen) +
		  VROCE_ICRC_LEN;
	enum vroce_drop why;
	struct vroce_qp *qp;

	if (vroce_pkt_parse(&rx.pkt, lp->hdr, len) < 0) {
		vroce_rx_error(vdev, NULL, VROCE_DROP_HEADERS);
		return;
	}
	qp = vroce_qp_get(vdev, rx.pkt.bth.dqpn);
	if (!qp) {
		vroce_rx_error(vdev, &rx.pkt, VROCE_DROP_NO_QP);
		return;
	}
	if (!vroce_pkey_match(rx.pkt.bth.pkey, VROCE_DEFAULT_PKEY)) {
		vroce_qp_put(qp);
		vroce_rx_error(vdev, &rx.pkt, VROCE_DROP_PKEY);
		return;
	}
	if (!vroce_rx_transport_ok(qp, &rx.pkt))
		why = VROCE_DROP_TRANSPORT;
	else if (!vroce_rx_from_addr(qp, true, from->ipv4, from->sip4,
				     &from->sgid))
		why = VROCE_DROP_PEER;
	else
		why = vroce_rx_connected(qp, &rx.pkt, lp->hdr);
	vroce_qp_put(qp);
	vroce_rx_count(vdev, &rx.pkt, why);
}

/*
 * encap_rcv of our UDP sockets: 0 means the skb is ours now. It may be a
 * chain of packets from GRO (gro.c), taken apart here.
 */
int vroce_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	struct vroce_dev *vdev = vroce_dev_get_by_netdev(skb->dev);

	struct sk_buff *segs;
	u32 n;

	if (!vdev) {
		kfree_skb(skb);
		return 0;
	}
	/* A chain that cannot be taken apart is dropped whole: count all. */
	n = max_t(u32, skb_shinfo(skb)->gso_segs, 1);
	segs = vroce_gro_split(skb);
	if (IS_ERR(segs)) {
		vroce_rx_dropped(vdev, U32_MAX, -1, 0, VROCE_DROP_CHAIN, n);
	} else {
		if (segs)
			vroce_count(vdev, VROCE_CNT_RX_GRO_PACKETS, 1);
		vroce_rx_packet(vdev, skb, false);
		while ((skb = vroce_gro_next(vdev, &segs))) {
			vroce_count(vdev, VROCE_CNT_RX_GRO_PACKETS, 1);
			vroce_rx_packet(vdev, skb, false);
		}
	}
	ib_device_put(&vdev->ibdev);
	return 0;
}
