#include "verbs/device.h"

#include "verbs/gid.h"
#include "log/log.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rp {

const char *mtu_str(ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return "256";
	case IBV_MTU_512: return "512";
	case IBV_MTU_1024: return "1024";
	case IBV_MTU_2048: return "2048";
	case IBV_MTU_4096: return "4096";
	}
	return "?";
}

unsigned mtu_bytes(ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0u;
}

int count_devices(std::string *names, std::string *why)
{
	int n = 0;
	errno = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (list == nullptr) {
		int e = errno;
		if (e == ENOSYS)
			*why = "this kernel has no RDMA support (ibv_get_device_list: " + std::string(strerror(e)) + ")";
		else
			*why = "ibv_get_device_list failed: " + std::string(strerror(e));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (i)
			*names += ' ';
		*names += ibv_get_device_name(list[i]);
	}
	ibv_free_device_list(list);
	if (n == 0)
		*why = "no RDMA device is registered (no driver loaded, or no rxe link: "
		       "'rdma link add rxe0 type rxe netdev IFACE')";
	return n;
}

int device_pick_gid(Device *dev, int gid_index, std::string *err)
{
	int ret;
	const uint8_t port = dev->port;
	/* The GID table tells which indices hold a valid GID and of which type. */
	std::vector<ibv_gid_entry> table(dev->port_attr.gid_tbl_len * dev->dev_attr.phys_port_cnt + 1);
	ssize_t ng = ibv_query_gid_table(dev->ctx, table.data(), table.size(), 0);
	if (ng < 0) {
		*err = dev->name + ": ibv_query_gid_table: " + strerror(static_cast<int>(-ng));
		return static_cast<int>(ng);
	}
	if (gid_index < 0) {
		gid_index = select_gid_index(table.data(), static_cast<size_t>(ng), port);
		if (gid_index < 0) {
			*err = dev->name + " port " + std::to_string(port) + ": no valid GID (has its netdev an IP address?)";
			return -EADDRNOTAVAIL;
		}
	} else {
		std::string valid;
		bool found = false;
		for (ssize_t i = 0; i < ng; i++) {
			if (table[i].port_num != port)
				continue;
			found |= table[i].gid_index == static_cast<uint32_t>(gid_index);
			valid += (valid.empty() ? "" : ", ") + std::to_string(table[i].gid_index);
		}
		if (!found) {
			*err = dev->name + " port " + std::to_string(port) + ": GID index " + std::to_string(gid_index) +
			       " holds no valid GID (valid: " + (valid.empty() ? "none" : valid) + ")";
			return -EINVAL;
		}
	}
	if ((ret = ibv_query_gid(dev->ctx, port, gid_index, &dev->gid)) != 0) {
		*err = dev->name + ": ibv_query_gid " + std::to_string(gid_index) + ": " + strerror(ret);
		return -ret;
	}
	dev->gid_index = gid_index;
	RP_LOG(DEBUG, VERBS, "rdmapipe: %s port %u: GID index %d, active MTU %d B, max_qp %d, max_qp_wr %d, max_cqe %d, "
	       "max_srq_wr %d, max_sge %d\n", dev->name.c_str(), port, gid_index, 128 << dev->port_attr.active_mtu,
	       dev->dev_attr.max_qp, dev->dev_attr.max_qp_wr, dev->dev_attr.max_cqe, dev->dev_attr.max_srq_wr,
	       dev->dev_attr.max_sge);
	return 0;
}

int device_open(Device *dev, const std::string &name, uint8_t port, int gid_index, std::string *err)
{
	int n = 0, ret;
	ibv_device **list = ibv_get_device_list(&n);
	if (list == nullptr || n == 0) {
		std::string why, names;
		count_devices(&names, &why);
		*err = "no RDMA device: " + why;
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	ibv_device *found = nullptr;
	std::string all;
	for (int i = 0; i < n; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		all += (i ? ", " : "") + std::string(dn);
		if (found == nullptr && (name.empty() || name == dn))
			found = list[i];
	}
	if (found == nullptr) {
		*err = "device '" + name + "' not found (present: " + all + ")";
		ibv_free_device_list(list);
		return -ENODEV;
	}
	dev->name = ibv_get_device_name(found);
	dev->port = port;
	dev->ctx = ibv_open_device(found);
	ibv_free_device_list(list);
	if (dev->ctx == nullptr) {
		ret = -errno;
		*err = dev->name + ": ibv_open_device: " + strerror(errno);
		return ret;
	}
	if ((ret = ibv_query_device(dev->ctx, &dev->dev_attr)) != 0) {
		*err = dev->name + ": ibv_query_device: " + strerror(ret);
		goto close_ctx;
	}
	if (port < 1 || port > dev->dev_attr.phys_port_cnt) {
		*err = dev->name + ": port " + std::to_string(port) + " does not exist (ports 1.." +
		       std::to_string(dev->dev_attr.phys_port_cnt) + ")";
		ret = EINVAL;
		goto close_ctx;
	}
	if ((ret = ibv_query_port(dev->ctx, port, &dev->port_attr)) != 0) {
		*err = dev->name + ": ibv_query_port " + std::to_string(port) + ": " + strerror(ret);
		goto close_ctx;
	}
	if (dev->port_attr.state != IBV_PORT_ACTIVE) {
		*err = dev->name + " port " + std::to_string(port) + " is " +
		       ibv_port_state_str(dev->port_attr.state) + ", not ACTIVE (is its netdev up?)";
		ret = ENETDOWN;
		goto close_ctx;
	}
	if ((ret = -device_pick_gid(dev, gid_index, err)) != 0)
		goto close_ctx;
	dev->pd = ibv_alloc_pd(dev->ctx);
	if (dev->pd == nullptr) {
		ret = errno;
		*err = dev->name + ": ibv_alloc_pd: " + strerror(errno);
		goto close_ctx;
	}
	return 0;

close_ctx:
	ibv_close_device(dev->ctx);
	dev->ctx = nullptr;
	return -ret;
}

void device_close(Device *dev)
{
	if (dev->pd)
		ibv_dealloc_pd(dev->pd);
	if (dev->ctx && dev->owns_ctx)
		ibv_close_device(dev->ctx);
	dev->pd = nullptr;
	dev->ctx = nullptr;
}

} // namespace rp
