// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /sys/class/infiniband/<dev>/objects/{pd,cq,qp,mr,mw,ah,srq}: how many objects of each kind the
 * device holds right now, so tests can check that nothing leaks.
 *
 * Copyright (c) 2026 the vroce developers
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "vroce.h"

static struct vroce_dev *dev_to_vdev(struct device *dev)
{
	return to_vdev(container_of(dev, struct ib_device, dev));
}

#define VROCE_OBJ_ATTR(name)						\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%d\n",					\
			  atomic_read(&dev_to_vdev(dev)->n_##name));	\
}									\
static DEVICE_ATTR_RO(name)

VROCE_OBJ_ATTR(pd);
VROCE_OBJ_ATTR(cq);
VROCE_OBJ_ATTR(qp);
VROCE_OBJ_ATTR(mr);
VROCE_OBJ_ATTR(mw);
VROCE_OBJ_ATTR(ah);
VROCE_OBJ_ATTR(srq);

static struct attribute *vroce_obj_attrs[] = {
	&dev_attr_pd.attr,
	&dev_attr_cq.attr,
	&dev_attr_qp.attr,
	&dev_attr_mr.attr,
	&dev_attr_mw.attr,
	&dev_attr_ah.attr,
	&dev_attr_srq.attr,
	NULL,
};

const struct attribute_group vroce_obj_group = {
	.name = "objects",
	.attrs = vroce_obj_attrs,
};
