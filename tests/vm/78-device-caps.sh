#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) the vroce developers
#
# The device capability flags vroce0 reports (ibv_devinfo -v) include
# every capability it has: memory windows of type 1 and 2B, RNR NAKs of
# its RC responder, modify_qp's current-state check, XRC, besides the port
# events, the system image GUID and the memory management extensions.
# And no capability it lacks: type 2A windows, automatic path migration,
# SRQ resize, UD IP checksums.
#
# vm: timeout=300

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/_vroce.sh"

vroce_up
has=(MEM_WINDOW MEM_WINDOW_TYPE_2B RC_RNR_NAK_GEN CURR_QP_STATE_MOD XRC
	PORT_ACTIVE_EVENT SYS_IMAGE_GUID MEM_MGT_EXTENSIONS)
lacks=(MEM_WINDOW_TYPE_2A AUTO_PATH_MIG SRQ_RESIZE UD_IP_CSUM)
tap_plan $((${#has[@]} + ${#lacks[@]} + 1))

# The flag names, one a line, that follow "device_cap_flags:".
flags=$(ibv_devinfo -v -d vroce0 2>/dev/null |
	awk '/device_cap_flags:/ { on = 1; next }
	     on && /^[ \t]+[A-Z0-9_]+[ \t]*$/ { print $1; next }
	     { on = 0 }')
[ -n "$flags" ]
tap_result $? "ibv_devinfo -v lists device_cap_flags"
tap_diag "device_cap_flags: $(tr "\n" " " <<<"$flags")"
for f in "${has[@]}"; do
	grep -qx "$f" <<<"$flags"
	tap_result $? "reports $f"
done
for f in "${lacks[@]}"; do
	! grep -qx "$f" <<<"$flags"
	tap_result $? "does not report $f"
done
tap_done
