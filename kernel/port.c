// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device and port attributes. The port follows its netdev: carrier and
 * admin state give the port state, the netdev MTU gives the active MTU.
 * Both are read from the netdev on every query, so they are never stale.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>

#include "vroce.h"
#include "core/roce.h"

enum ib_port_state vroce_port_state(struct vroce_dev *vdev)
{
	struct net_device *ndev = vdev->ndev;

	return netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static enum ib_port_phys_state vroce_phys_state(struct vroce_dev *vdev,
						enum ib_port_state state)
{
	if (state == IB_PORT_ACTIVE)
		return IB_PORT_PHYS_STATE_LINK_UP;
	if (dev_get_flags(vdev->ndev) & IFF_UP)
		return IB_PORT_PHYS_STATE_POLLING;
	return IB_PORT_PHYS_STATE_DISABLED;
}

/* The active IB MTU (enum ib_mtu) that the netdev's MTU allows. */
int vroce_port_mtu(struct vroce_dev *vdev)
{
	int mtu = vroce_mtu_for_netdev(READ_ONCE(vdev->ndev->mtu));

	/* A netdev too small for a 256-byte IB MTU still reports 256. */
	return mtu ? mtu : IB_MTU_256;
}

/*
 * What on-demand paging (odp.c) serves, transport by transport: whatever
 * an RC or XRC responder receives into, faulted in behind an RNR NAK, and
 * whatever a requester sends from or reads into, faulted in by its send
 * engine. UC and UD receive with no RNR NAK to wait behind: they send
 * from ODP MRs only.
 */
static void vroce_odp_caps(struct ib_device_attr *attr)
{
	u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.xrc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND;
	attr->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}

int vroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	attr->fw_ver = (u64)VROCE_FW_VER_MAJOR << 32 |
		       (u64)VROCE_FW_VER_MINOR << 16;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = VROCE_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_MASK;
	attr->vendor_id = VROCE_VENDOR_ID;
	attr->vendor_part_id = VROCE_VENDOR_PART_ID;
	attr->hw_ver = VROCE_HW_VER;
	attr->max_qp = VROCE_MAX_QP;
	attr->max_qp_wr = VROCE_MAX_QP_WR;
	/*
	 * What works: windows of type 1 and of type 2B (bound to the QP
	 * that bound them: mw.c, sgl.c), RNR NAKs of the RC responder, the
	 * current state modify_qp checks against (IB_QP_CUR_STATE), and XRC
	 * (xrc.c).
	 */
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_CURR_QP_STATE_MOD |
				 IB_DEVICE_XRC |
				 VROCE_DEVICE_ATOMIC_WRITE;
	attr->max_fast_reg_page_list_len = VROCE_MAX_FRMR_PAGES;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	vroce_odp_caps(attr);
	attr->max_send_sge = VROCE_MAX_SGE;
	attr->max_recv_sge = VROCE_MAX_SGE;
	attr->max_sge_rd = VROCE_MAX_SGE_RD;
	attr->max_cq = VROCE_MAX_CQ;
	attr->max_cqe = VROCE_MAX_CQE;
	attr->max_mr = VROCE_MAX_MR;
	attr->max_mw = VROCE_MAX_MW;
	attr->max_dm_size = VROCE_MAX_DM_SIZE;
	attr->max_pd = VROCE_MAX_PD;
	attr->max_qp_rd_atom = VROCE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = VROCE_MAX_QP_RD_ATOM;
	attr->max_res_rd_atom = VROCE_MAX_RES_RD_ATOM;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = VROCE_MAX_AH;
	attr->max_srq = VROCE_MAX_SRQ;
	attr->max_srq_wr = VROCE_MAX_SRQ_WR;
	attr->max_srq_sge = VROCE_MAX_SRQ_SGE;
	attr->max_mcast_grp = VROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = VROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = VROCE_MAX_TOTAL_MCAST_QP_ATTACH;
	attr->max_pkeys = VROCE_MAX_PKEYS;
	attr->local_ca_ack_delay = 15;
	/*
	 * Each CQE carries CLOCK_MONOTONIC in ns (cq.c): a 1 GHz clock of
	 * 64 bits, which user space reads as the same clock.
	 */
	attr->hca_core_clock = VROCE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	return 0;
}

int vroce_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct vroce_dev *vdev = to_vdev(ibdev);

	/* ib_core zeroes *attr before calling us. */
	attr->state = vroce_port_state(vdev);
	attr->phys_state = vroce_phys_state(vdev, attr->state);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = vroce_port_mtu(vdev);
	attr->gid_tbl_len = VROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = VROCE_MAX_MSG_SZ;
	attr->pkey_tbl_len = VROCE_MAX_PKEYS;
	attr->max_vl_num = 1;
	attr->active_speed = IB_SPEED_SDR;
	attr->active_width = IB_WIDTH_1X;
	/* Fails only while the netdev goes away; the defaults then stand. */
	ib_get_eth_speed(ibdev, port, &attr->active_speed,
			 &attr->active_width);
	return 0;
}

int vroce_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = VROCE_MAX_PKEYS;
	immutable->gid_tbl_len = VROCE_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

int vroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= VROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = VROCE_DEFAULT_PKEY;
	return 0;
}

enum rdma_link_layer vroce_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

void vroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d",
		 VROCE_FW_VER_MAJOR, VROCE_FW_VER_MINOR);
}
