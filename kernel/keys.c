// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The key space shared by MRs and MWs. A key is a 24-bit index and an
 * 8-bit key byte (core/key.h). Indices are handed out cyclically, so one
 * is reused as late as possible, and each reuse gets a random key byte
 * different from the index's previous one: a stale key never matches.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "vroce.h"
#include "core/roce.h"

#define VROCE_KEY_INDICES	(VROCE_MAX_MR + VROCE_MAX_MW + 1)

int vroce_keys_init(struct vroce_dev *vdev)
{
	xa_init_flags(&vdev->keys, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	vdev->key_bytes = kvzalloc(VROCE_KEY_INDICES, GFP_KERNEL);
	return vdev->key_bytes ? 0 : -ENOMEM;
}

void vroce_keys_destroy(struct vroce_dev *vdev)
{
	WARN_ON(!xa_empty(&vdev->keys));
	xa_destroy(&vdev->keys);
	kvfree(vdev->key_bytes);
}

/* Gives @obj (tagged VROCE_KEY_MR or _MW) a fresh key in *@key. */
int vroce_key_alloc(struct vroce_dev *vdev, void *obj, int tag, u32 *key)
{
	u32 index;
	u8 byte;
	int err;

	err = xa_alloc_cyclic_bh(&vdev->keys, &index, xa_tag_pointer(obj, tag),
			      XA_LIMIT(1, VROCE_KEY_INDICES - 1),
			      &vdev->next_key, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	byte = vroce_key_next_byte(vdev->key_bytes[index], get_random_u32());
	vdev->key_bytes[index] = byte;
	*key = vroce_key_make(index, byte);
	return 0;
}

void vroce_key_free(struct vroce_dev *vdev, u32 key)
{
	xa_erase_bh(&vdev->keys, vroce_key_index(key));
}
