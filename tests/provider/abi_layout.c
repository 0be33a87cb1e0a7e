// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) the vroce developers
 *
 * Checks the layouts declared in user/ibverbs_private.h (and the
 * provider's own udata buffers) against the layouts libibverbs was built
 * with.  The expected numbers were measured on x86_64 by compiling
 * rdma-core's own driver.h and kern-abi.h of v39.0, v44.0 and v56.1, which
 * all gave the same values but for struct verbs_qp (see check_verbs_qp).
 * Built for a later private ABI (IBVERBS_PABI_VERSION), it checks
 * verbs_context_ops, verbs_qp and the verbs_context size against the
 * measurements of that ABI's rdma-core (abi_layout_later.h) instead.
 * The vroce ABI structs the provider shares with the kernel are checked
 * too: their layout is the contract of uapi/rdma/vroce-abi.h.
 */
#include <stddef.h>
#include <stdint.h>

#include "tap.h"
#include "vroce.h"
#include "abi_layout_later.h"

static void check_size(size_t got, size_t want, const char *what)
{
	if (!tap_ok(got == want, "sizeof(%s) == %zu", what, want))
		tap_diag("got %zu", got);
}

static void check_off(size_t got, size_t want, const char *what)
{
	if (!tap_ok(got == want, "offsetof(%s) == %zu", what, want))
		tap_diag("got %zu", got);
}

#define SIZE(type, want) check_size(sizeof(type), want, #type)
#define OFF(type, member, want) \
	check_off(offsetof(type, member), want, #type ", " #member)

/* struct verbs_context_ops as in rdma-core v44: member, offset. */
#define VERBS_CONTEXT_OPS_V44	\
	OP(advise_mr, 0)	\
	OP(alloc_dm, 8)	\
	OP(alloc_mw, 16)	\
	OP(alloc_null_mr, 24)	\
	OP(alloc_parent_domain, 32)	\
	OP(alloc_pd, 40)	\
	OP(alloc_td, 48)	\
	OP(async_event, 56)	\
	OP(attach_counters_point_flow, 64)	\
	OP(attach_mcast, 72)	\
	OP(bind_mw, 80)	\
	OP(close_xrcd, 88)	\
	OP(cq_event, 96)	\
	OP(create_ah, 104)	\
	OP(create_counters, 112)	\
	OP(create_cq, 120)	\
	OP(create_cq_ex, 128)	\
	OP(create_flow, 136)	\
	OP(create_flow_action_esp, 144)	\
	OP(create_qp, 152)	\
	OP(create_qp_ex, 160)	\
	OP(create_rwq_ind_table, 168)	\
	OP(create_srq, 176)	\
	OP(create_srq_ex, 184)	\
	OP(create_wq, 192)	\
	OP(dealloc_mw, 200)	\
	OP(dealloc_pd, 208)	\
	OP(dealloc_td, 216)	\
	OP(dereg_mr, 224)	\
	OP(destroy_ah, 232)	\
	OP(destroy_counters, 240)	\
	OP(destroy_cq, 248)	\
	OP(destroy_flow, 256)	\
	OP(destroy_flow_action, 264)	\
	OP(destroy_qp, 272)	\
	OP(destroy_rwq_ind_table, 280)	\
	OP(destroy_srq, 288)	\
	OP(destroy_wq, 296)	\
	OP(detach_mcast, 304)	\
	OP(free_context, 312)	\
	OP(free_dm, 320)	\
	OP(get_srq_num, 328)	\
	OP(import_dm, 336)	\
	OP(import_mr, 344)	\
	OP(import_pd, 352)	\
	OP(modify_cq, 360)	\
	OP(modify_flow_action_esp, 368)	\
	OP(modify_qp, 376)	\
	OP(modify_qp_rate_limit, 384)	\
	OP(modify_srq, 392)	\
	OP(modify_wq, 400)	\
	OP(open_qp, 408)	\
	OP(open_xrcd, 416)	\
	OP(poll_cq, 424)	\
	OP(post_recv, 432)	\
	OP(post_send, 440)	\
	OP(post_srq_ops, 448)	\
	OP(post_srq_recv, 456)	\
	OP(query_device_ex, 464)	\
	OP(query_ece, 472)	\
	OP(query_port, 480)	\
	OP(query_qp, 488)	\
	OP(query_qp_data_in_order, 496)	\
	OP(query_rt_values, 504)	\
	OP(query_srq, 512)	\
	OP(read_counters, 520)	\
	OP(reg_dm_mr, 528)	\
	OP(reg_dmabuf_mr, 536)	\
	OP(reg_mr, 544)	\
	OP(req_notify_cq, 552)	\
	OP(rereg_mr, 560)	\
	OP(resize_cq, 568)	\
	OP(set_ece, 576)	\
	OP(unimport_dm, 584)	\
	OP(unimport_mr, 592)	\
	OP(unimport_pd, 600)

static void check_context_ops(void)
{
	unsigned int members = 0;
	unsigned int bad = 0;

#define OP(name, want)							\
	do {								\
		size_t got = offsetof(struct verbs_context_ops, name);	\
		members++;						\
		if (got != (want)) {					\
			tap_diag("verbs_context_ops.%s at %zu, want %d",	\
				 #name, got, want);			\
			bad++;						\
		}							\
	} while (0);
#if VROCE_PABI == 34
	VERBS_CONTEXT_OPS_V44
#define OPS_N 76
#elif VROCE_PABI == 57
	VERBS_CONTEXT_OPS_57
#define OPS_N VERBS_CONTEXT_OPS_57_N
#elif VROCE_PABI == 59
	VERBS_CONTEXT_OPS_59
#define OPS_N VERBS_CONTEXT_OPS_59_N
#elif VROCE_PABI == 64
	VERBS_CONTEXT_OPS_64
#define OPS_N VERBS_CONTEXT_OPS_64_N
#else
	VERBS_CONTEXT_OPS_65
#define OPS_N VERBS_CONTEXT_OPS_65_N
#endif
#undef OP

	tap_ok(members == OPS_N && !bad,
	       "verbs_context_ops: all %u members of ABI %d at their offsets",
	       members, VROCE_PABI);
	SIZE(struct verbs_context_ops, OPS_N * sizeof(void *));
	tap_ok(sizeof(struct verbs_context_ops) == OPS_N * sizeof(void *),
	       "verbs_context_ops is exactly %d pointers", OPS_N);
}

/*
 * The verbs_context libibverbs lays out in struct vroce_context: 648
 * bytes up to ABI 57, 680 for ABI 59 (v62, v63), 696 for 64 and 65,
 * ending where ours ends.
 */
static void check_verbs_context(void)
{
	/* Measured: its size, and where its sz and context are. */
	const size_t want = VROCE_PABI >= 64 ? 696 :
			    VROCE_PABI == 59 ? 680 : 648;
	const size_t sz_at = VROCE_PABI >= 64 ? 360 :
			     VROCE_PABI == 59 ? 344 : 312;
	const size_t context_at = VROCE_PABI >= 64 ? 368 :
				  VROCE_PABI == 59 ? 352 : 320;
	size_t base = offsetof(struct vroce_context, vctx_room);

	tap_ok(VROCE_VCTX_SIZE == want, "verbs_context of ABI %d: %zu bytes",
	       VROCE_PABI, want);
	tap_ok(offsetof(struct vroce_context, ibv_ctx) - base +
	       sizeof(struct verbs_context) == want,
	       "libibverbs' verbs_context ends where ours does");
	tap_ok(offsetof(struct vroce_context, ibv_ctx.sz) - base == sz_at &&
	       offsetof(struct vroce_context, ibv_ctx.context) - base ==
	       context_at,
	       "its sz and context are ours (at %zu and %zu of it)", sz_at,
	       context_at);
}

static void check_device_ops(void)
{
	SIZE(struct verbs_device_ops, 72);
	OFF(struct verbs_device_ops, name, 0);
	OFF(struct verbs_device_ops, match_min_abi_version, 8);
	OFF(struct verbs_device_ops, match_max_abi_version, 12);
	OFF(struct verbs_device_ops, match_table, 16);
	OFF(struct verbs_device_ops, static_providers, 24);
	OFF(struct verbs_device_ops, match_device, 32);
	OFF(struct verbs_device_ops, alloc_context, 40);
	OFF(struct verbs_device_ops, import_context, 48);
	OFF(struct verbs_device_ops, alloc_device, 56);
	OFF(struct verbs_device_ops, uninit_device, 64);
}

static void check_device(void)
{
	SIZE(struct ibv_device, 664);
	SIZE(struct verbs_device, 712);
	OFF(struct verbs_device, device, 0);
	OFF(struct verbs_device, ops, 664);
	OFF(struct verbs_device, refcount, 672);
	OFF(struct verbs_device, entry, 680);
	OFF(struct verbs_device, sysfs, 696);
	OFF(struct verbs_device, core_support, 704);
	OFF(struct vroce_device, ibv_dev, 0);
}

static void check_match_ent(void)
{
	SIZE(struct verbs_match_ent, 24);
	OFF(struct verbs_match_ent, driver_data, 0);
	OFF(struct verbs_match_ent, u, 8);
	OFF(struct verbs_match_ent, vendor, 16);
	OFF(struct verbs_match_ent, device, 18);
	OFF(struct verbs_match_ent, kind, 20);
	tap_ok(VERBS_MATCH_SENTINEL == 0 && VERBS_MATCH_PCI == 1 &&
	       VERBS_MATCH_MODALIAS == 2 && VERBS_MATCH_DRIVER_ID == 3,
	       "VERBS_MATCH_* values");
}

#define CMD_SIZE(cmd, kabi)						\
	tap_ok(sizeof(struct cmd) == sizeof(struct ib_uverbs_cmd_hdr) +	\
	       sizeof(struct kabi) &&					\
	       offsetof(struct cmd, core_payload) ==			\
	       sizeof(struct ib_uverbs_cmd_hdr),				\
	       "struct " #cmd " is ib_uverbs_cmd_hdr + " #kabi)

static void check_cmds(void)
{
	SIZE(struct ib_uverbs_cmd_hdr, 8);
	SIZE(struct ibv_get_context, 16);
	CMD_SIZE(ibv_get_context, ib_uverbs_get_context);
	SIZE(struct ibv_query_port, 24);
	CMD_SIZE(ibv_query_port, ib_uverbs_query_port);
	SIZE(struct ibv_alloc_pd, 16);
	CMD_SIZE(ibv_alloc_pd, ib_uverbs_alloc_pd);
	SIZE(struct ibv_create_cq, 40);
	CMD_SIZE(ibv_create_cq, ib_uverbs_create_cq);
	SIZE(struct ibv_resize_cq, 24);
	CMD_SIZE(ibv_resize_cq, ib_uverbs_resize_cq);
	SIZE(struct ibv_create_qp, 64);
	CMD_SIZE(ibv_create_qp, ib_uverbs_create_qp);
	SIZE(struct ibv_modify_qp, 120);
	CMD_SIZE(ibv_modify_qp, ib_uverbs_modify_qp);
	SIZE(struct ibv_query_qp, 24);
	CMD_SIZE(ibv_query_qp, ib_uverbs_query_qp);
	SIZE(struct ibv_post_send, 32);
	CMD_SIZE(ibv_post_send, ib_uverbs_post_send);
	SIZE(struct ibv_reg_mr, 48);
	CMD_SIZE(ibv_reg_mr, ib_uverbs_reg_mr);
	SIZE(struct ibv_rereg_mr, 56);
	CMD_SIZE(ibv_rereg_mr, ib_uverbs_rereg_mr);
	SIZE(struct ibv_alloc_mw, 24);
	CMD_SIZE(ibv_alloc_mw, ib_uverbs_alloc_mw);
	SIZE(struct ibv_create_srq, 40);
	CMD_SIZE(ibv_create_srq, ib_uverbs_create_srq);
	SIZE(struct ibv_modify_srq, 24);
	CMD_SIZE(ibv_modify_srq, ib_uverbs_modify_srq);
	SIZE(struct ibv_query_srq, 24);
	CMD_SIZE(ibv_query_srq, ib_uverbs_query_srq);
	SIZE(struct ibv_open_xrcd, 24);
	CMD_SIZE(ibv_open_xrcd, ib_uverbs_open_xrcd);
	SIZE(struct ibv_create_xsrq, 56);
	CMD_SIZE(ibv_create_xsrq, ib_uverbs_create_xsrq);
	SIZE(struct ibv_open_qp, 40);
	CMD_SIZE(ibv_open_qp, ib_uverbs_open_qp);
	SIZE(struct ib_uverbs_open_xrcd_resp, 4);
	SIZE(struct ib_uverbs_reg_mr_resp, 12);
	SIZE(struct ib_uverbs_rereg_mr_resp, 8);
	SIZE(struct ib_uverbs_alloc_mw_resp, 8);
	SIZE(struct ib_uverbs_create_ah_resp, 4);
	SIZE(struct ib_uverbs_create_srq_resp, 16);
	/* libibverbs sizes the response it asks for with its own struct. */
	SIZE(struct ib_uverbs_ex_query_device_resp, 304);
	SIZE(struct ib_uverbs_get_context_resp, 8);
	SIZE(struct ib_uverbs_alloc_pd_resp, 4);
	SIZE(struct ib_uverbs_create_cq_resp, 8);
	SIZE(struct ib_uverbs_resize_cq_resp, 8);
	SIZE(struct ib_uverbs_create_qp_resp, 32);
	SIZE(struct ib_uverbs_post_send_resp, 4);
	SIZE(struct ib_uverbs_send_wr, 56);
}

static void check_verbs_mr(void)
{
	SIZE(struct verbs_mr, 56);
	OFF(struct verbs_mr, ibv_mr, 0);
	OFF(struct verbs_mr, mr_type, 48);
	OFF(struct verbs_mr, access, 52);
	tap_ok(IBV_MR_TYPE_MR == 0 && IBV_MR_TYPE_NULL_MR == 1 &&
	       IBV_MR_TYPE_IMPORTED_MR == 2 && IBV_MR_TYPE_DMABUF_MR == 3,
	       "IBV_MR_TYPE_* values");
}

static void check_verbs_xrcd_srq(void)
{
	SIZE(struct verbs_xrcd, 16);
	OFF(struct verbs_xrcd, xrcd, 0);
	OFF(struct verbs_xrcd, comp_mask, 8);
	OFF(struct verbs_xrcd, handle, 12);
	SIZE(struct verbs_srq, 160);
	OFF(struct verbs_srq, srq, 0);
	OFF(struct verbs_srq, srq_type, 128);
	OFF(struct verbs_srq, xrcd, 136);
	OFF(struct verbs_srq, cq, 144);
	OFF(struct verbs_srq, srq_num, 152);
}

static void check_verbs_cq(void)
{
	SIZE(struct verbs_cq, 288);
	OFF(struct verbs_cq, cq, 0);
	OFF(struct verbs_cq, cq_ex, 0);
	OFF(struct vroce_cq, vcq, 0);
}

/*
 * struct verbs_qp ends with members behind the public struct ibv_qp_ex,
 * which grows: comp_mask is at 344 in v39.0, 352 in v44.0 (the values
 * below) and 360 in v56.1.  Whichever libibverbs reads it, it must find
 * zeroes in a vroce QP, not the provider's own fields.
 */
static void check_verbs_qp(void)
{
	static const size_t comp_mask_at[] = { 344, 352, 360 };
	unsigned int i;

#if VROCE_PABI >= 57
	/* Measured from v57.0 to v65.0: struct ibv_qp_ex stays at 360. */
	SIZE(struct verbs_qp, 376);
	OFF(struct verbs_qp, comp_mask, 360);
	OFF(struct verbs_qp, xrcd, 368);
#else
	/* v44's headers (352), or those of v45 to v56 (360). */
	SIZE(struct verbs_qp, sizeof(struct ibv_qp_ex) + 16);
	OFF(struct verbs_qp, comp_mask, sizeof(struct ibv_qp_ex));
	OFF(struct verbs_qp, xrcd, sizeof(struct ibv_qp_ex) + 8);
#endif
	OFF(struct verbs_qp, qp, 0);
	OFF(struct verbs_qp, qp_ex, 0);
	OFF(struct vroce_qp, vqp, 0);
	/* comp_mask, padding and the xrcd pointer libibverbs may write. */
	for (i = 0; i < 3; i++)
		tap_ok(comp_mask_at[i] + 16 <=
		       offsetof(struct vroce_qp, comp_mask_at),
		       "comp_mask and xrcd at %zu lie before the provider's own fields (%zu)",
		       comp_mask_at[i], offsetof(struct vroce_qp, comp_mask_at));
}

static void check_udata(void)
{
	SIZE(struct vroce_alloc_ucontext_resp, 16);
	SIZE(struct vroce_get_context_resp, 24);
	OFF(struct vroce_get_context_resp, drv, 8);
	SIZE(struct vroce_alloc_pd_resp, 8);
	SIZE(struct vroce_alloc_pd_cmd_resp, 12);
	OFF(struct vroce_alloc_pd_cmd_resp, drv, 4);
	SIZE(struct vroce_create_cq_resp, 24);
	SIZE(struct vroce_create_cq_cmd_resp, 32);
	OFF(struct vroce_create_cq_cmd_resp, drv, 8);
	SIZE(struct vroce_resize_cq_resp, 16);
	SIZE(struct vroce_resize_cq_cmd_resp, 24);
	OFF(struct vroce_resize_cq_cmd_resp, drv, 8);
	SIZE(struct vroce_create_qp_resp, 48);
	SIZE(struct vroce_create_qp_cmd_resp, 80);
	OFF(struct vroce_create_qp_cmd_resp, drv, 32);
	SIZE(struct vroce_create_srq_resp, 24);
	SIZE(struct vroce_create_srq_cmd_resp, 40);
	OFF(struct vroce_create_srq_cmd_resp, drv, 16);
	SIZE(struct vroce_create_ah_resp, 8);
	SIZE(struct vroce_create_ah_cmd_resp, 12);
	OFF(struct vroce_create_ah_cmd_resp, drv, 4);
	OFF(struct vroce_ah, ibv_ah, 0);
	OFF(struct vroce_srq, vsrq, 0);
	OFF(struct vroce_srq, vsrq.srq, 0);
}

/* The shared ring layouts of vroce-abi.h. */
static void check_rings(void)
{
	SIZE(struct vroce_ring_hdr, 192);
	OFF(struct vroce_ring_hdr, prod, 0);
	OFF(struct vroce_ring_hdr, cons, 64);
	OFF(struct vroce_ring_hdr, notify, 128);
	tap_ok(VROCE_RING_ENTRIES_OFFSET == 192,
	       "VROCE_RING_ENTRIES_OFFSET == 192");
	SIZE(struct vroce_sge, 16);
	SIZE(struct vroce_send_wqe, 64);
	OFF(struct vroce_send_wqe, wr_id, 0);
	OFF(struct vroce_send_wqe, opcode, 8);
	OFF(struct vroce_send_wqe, flags, 9);
	OFF(struct vroce_send_wqe, num_sge, 10);
	OFF(struct vroce_send_wqe, imm_data, 12);
	OFF(struct vroce_send_wqe, inline_len, 16);
	OFF(struct vroce_send_wqe, xrc_srqn, 20);
	OFF(struct vroce_send_wqe, u, 24);
	OFF(struct vroce_send_wqe, u.rdma.rkey, 32);
	OFF(struct vroce_send_wqe, u.atomic.swap, 40);
	OFF(struct vroce_send_wqe, u.atomic.rkey, 48);
	OFF(struct vroce_send_wqe, u.ud.remote_qkey, 32);
	OFF(struct vroce_send_wqe, u.bind.new_rkey, 44);
	SIZE(struct vroce_recv_wqe, 16);
	OFF(struct vroce_recv_wqe, num_sge, 8);
	SIZE(struct vroce_cqe, 40);
	OFF(struct vroce_cqe, status, 8);
	OFF(struct vroce_cqe, byte_len, 12);
	OFF(struct vroce_cqe, imm_data, 16);
	OFF(struct vroce_cqe, qp_num, 20);
	OFF(struct vroce_cqe, src_qp, 24);
	OFF(struct vroce_cqe, pkey_index, 28);
	OFF(struct vroce_cqe, network_hdr_type, 30);
	OFF(struct vroce_cqe, timestamp, 32);
}

int main(void)
{
	tap_ok(IBVERBS_PABI_VERSION == VROCE_TEST_PABI,
	       "private ABI version is %d", VROCE_TEST_PABI);
	check_context_ops();
	check_verbs_context();
	check_device_ops();
	check_device();
	check_match_ent();
	check_cmds();
	check_verbs_mr();
	check_verbs_xrcd_srq();
	check_verbs_cq();
	check_verbs_qp();
	check_udata();
	check_rings();
	return tap_done();
}
