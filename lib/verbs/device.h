/* Setup path: open an RDMA device, probe what it can do, pick the GID.
 * Runs once before the lcores launch; errors name the device and the cause. */
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace rp {

struct Device {
	std::string name;
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	uint8_t port = 1;
	int gid_index = -1;
	ibv_gid gid{};
	ibv_port_attr port_attr{};
	ibv_device_attr dev_attr{};
	bool owns_ctx = true;   // false: librdmacm's context (cm_device_open), not ours to close
};

/* Lists the devices. Returns the count (0 when none) and, when none, why in *why
 * (the kernel has no RDMA, no driver loaded, ...). */
int count_devices(std::string *names, std::string *why);

/* Opens `name` (first device when empty), checks the port is ACTIVE and picks the
 * GID (gid_index < 0: automatic). Returns 0 or -errno with *err set. */
int device_open(Device *dev, const std::string &name, uint8_t port, int gid_index, std::string *err);
/* Releases the PD, and the context when this Device opened it (either kind of open). */
void device_close(Device *dev);

/* For an open context whose port is queried (dev->ctx, port, port_attr, dev_attr):
 * picks the GID (gid_index < 0: RoCE v2 IPv4 first) or checks the one given, into
 * dev->gid and dev->gid_index. Returns 0 or -errno with *err. */
int device_pick_gid(Device *dev, int gid_index, std::string *err);

const char *mtu_str(ibv_mtu mtu);
/* The MTU in bytes (256..4096; 0 for a value outside the enum). */
unsigned mtu_bytes(ibv_mtu mtu);

} // namespace rp
