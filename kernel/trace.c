// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one place vroce's tracepoints (vroce_trace.h) are defined.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include "vroce.h"

#define CREATE_TRACE_POINTS
#include "vroce_trace.h"
