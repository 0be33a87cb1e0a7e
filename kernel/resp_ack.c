// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Coalesced ACKs of the RC responder. A SEND or RDMA WRITE packet that
 * asks for an acknowledgement does not get one at once: its QP notes the
 * PSN (and MSN) to acknowledge and goes on a per-CPU list, and a tasklet
 * sends one ACK per QP once the receive softirq has handled the batch of
 * packets it had. An ACK acknowledges every PSN up to its own (IBTA
 * 9.7.5.1.1), so the ACK of the newest request answers the whole batch.
 * The responder (resp.c) sends a pending ACK ahead of any other answer,
 * so answers keep their order.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/interrupt.h>
#include <linux/llist.h>
#include <linux/percpu.h>

#include "vroce.h"

struct vroce_ack_cpu {
	struct llist_head qps;
	struct tasklet_struct tasklet;
};

static DEFINE_PER_CPU(struct vroce_ack_cpu, vroce_ack_cpus);

static void vroce_ack_run(struct tasklet_struct *t)
{
	struct vroce_ack_cpu *c = from_tasklet(c, t, tasklet);
	struct llist_node *list = llist_del_all(&c->qps);
	struct vroce_qp *qp, *next;

	llist_for_each_entry_safe(qp, next, list, resp.ack_node) {
		vroce_resp_send_pending_ack(qp);
		vroce_qp_put(qp);
	}
}

/*
 * @qp has an ACK pending and is on no list: queue it, with a reference,
 * for this CPU's tasklet. Softirq or BH-disabled context, the caller
 * holding a reference.
 */
void vroce_ack_queue(struct vroce_qp *qp)
{
	struct vroce_ack_cpu *c = this_cpu_ptr(&vroce_ack_cpus);

	vroce_qp_hold(qp);
	llist_add(&qp->resp.ack_node, &c->qps);
	tasklet_schedule(&c->tasklet);
}

void vroce_ack_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct vroce_ack_cpu *c = per_cpu_ptr(&vroce_ack_cpus, cpu);

		init_llist_head(&c->qps);
		tasklet_setup(&c->tasklet, vroce_ack_run);
	}
}

/* Every QP is gone, so no tasklet gets scheduled any more. */
void vroce_ack_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		tasklet_kill(&per_cpu_ptr(&vroce_ack_cpus, cpu)->tasklet);
}
