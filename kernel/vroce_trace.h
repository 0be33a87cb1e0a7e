/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vroce's tracepoints (events/vroce in tracefs, perf trace, trace-cmd):
 * QP state changes, timeouts and retransmissions, NAKs sent and acted
 * upon, and received packets dropped, with the reason. Each event that
 * a counter also counts fires exactly where the counter moves, so the
 * two always agree: vroce_retransmit and retransmits, vroce_timeout and
 * retry_timeouts, vroce_rx_drop (its count summed) and rx_dropped.
 *
 * Copyright (c) 2026 the vroce developers
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vroce

#if !defined(VROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define VROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "vroce.h"

/* Symbolic values, for the tools that read the events' formats. */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(VROCE_DROP_HEADERS);
TRACE_DEFINE_ENUM(VROCE_DROP_ICRC);
TRACE_DEFINE_ENUM(VROCE_DROP_NO_QP);
TRACE_DEFINE_ENUM(VROCE_DROP_PKEY);
TRACE_DEFINE_ENUM(VROCE_DROP_TRANSPORT);
TRACE_DEFINE_ENUM(VROCE_DROP_PEER);
TRACE_DEFINE_ENUM(VROCE_DROP_QKEY);
TRACE_DEFINE_ENUM(VROCE_DROP_STATE);
TRACE_DEFINE_ENUM(VROCE_DROP_NO_RECV);
TRACE_DEFINE_ENUM(VROCE_DROP_PROTOCOL);
TRACE_DEFINE_ENUM(VROCE_DROP_NOMEM);
TRACE_DEFINE_ENUM(VROCE_DROP_CHAIN);

#define vroce_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

#define vroce_show_drop(r)						\
	__print_symbolic(r, { VROCE_DROP_HEADERS, "headers" },		\
			 { VROCE_DROP_ICRC, "icrc" },			\
			 { VROCE_DROP_NO_QP, "no_qp" },			\
			 { VROCE_DROP_PKEY, "pkey" },			\
			 { VROCE_DROP_TRANSPORT, "transport" },		\
			 { VROCE_DROP_PEER, "peer" },			\
			 { VROCE_DROP_QKEY, "qkey" },			\
			 { VROCE_DROP_STATE, "state" },			\
			 { VROCE_DROP_NO_RECV, "no_recv_wqe" },		\
			 { VROCE_DROP_PROTOCOL, "protocol" },		\
			 { VROCE_DROP_NOMEM, "nomem" },			\
			 { VROCE_DROP_CHAIN, "chain" })

TRACE_EVENT(vroce_qp_state,
	TP_PROTO(const struct ib_qp *ibqp, int from, int to),
	TP_ARGS(ibqp, from, to),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		strscpy_pad(__entry->dev, ibqp->device->name,
			    IB_DEVICE_NAME_MAX);
		__entry->qpn = ibqp->qp_num;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("%s qpn %u %s -> %s", __entry->dev, __entry->qpn,
		  vroce_show_qp_state(__entry->from),
		  vroce_show_qp_state(__entry->to))
);

DECLARE_EVENT_CLASS(vroce_qp_psn,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 value),
	TP_ARGS(ibqp, psn, value),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, value)
	),
	TP_fast_assign(
		strscpy_pad(__entry->dev, ibqp->device->name,
			    IB_DEVICE_NAME_MAX);
		__entry->qpn = ibqp->qp_num;
		__entry->psn = psn;
		__entry->value = value;
	),
	TP_printk("%s qpn %u psn %u value %u", __entry->dev, __entry->qpn,
		  __entry->psn, __entry->value)
);

/* A packet of @psn sent again (value: the highest PSN sent so far). */
DEFINE_EVENT(vroce_qp_psn, vroce_retransmit,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 value),
	TP_ARGS(ibqp, psn, value));

/* The retransmit timer expired at una @psn (value: retries left). */
DEFINE_EVENT(vroce_qp_psn, vroce_timeout,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 value),
	TP_ARGS(ibqp, psn, value));

/* A NAK or RNR NAK of @psn sent by the responder (value: AETH syndrome). */
DEFINE_EVENT(vroce_qp_psn, vroce_nak_sent,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 value),
	TP_ARGS(ibqp, psn, value));

/* A NAK or RNR NAK of @psn the requester acted upon (value: syndrome). */
DEFINE_EVENT(vroce_qp_psn, vroce_nak_rcvd,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 value),
	TP_ARGS(ibqp, psn, value));

TRACE_EVENT(vroce_rx_drop,
	TP_PROTO(const struct ib_device *ibdev, u32 qpn, int opcode, u32 psn,
		 int reason, u32 count),
	TP_ARGS(ibdev, qpn, opcode, psn, reason, count),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(int, opcode)
		__field(u32, psn)
		__field(int, reason)
		__field(u32, count)
	),
	TP_fast_assign(
		strscpy_pad(__entry->dev, ibdev->name, IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->opcode = opcode;
		__entry->psn = psn;
		__entry->reason = reason;
		__entry->count = count;
	),
	TP_printk("%s qpn %d opcode %d psn %u reason %s count %u",
		  __entry->dev, (int)__entry->qpn, __entry->opcode,
		  __entry->psn, vroce_show_drop(__entry->reason),
		  __entry->count)
);

#endif /* VROCE_TRACE_H */

/* define_trace.h includes this file again, found through -I kernel/. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vroce_trace
#include <trace/define_trace.h>
