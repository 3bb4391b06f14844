/* Per-QP hardware counters (`rdma statistic qp`; run.metrics_qp, --metrics-qp): the
 * kernel binds a counter to one QP and gives its hw counters over RDMA netlink
 * (RDMA_NLDEV_CMD_STAT_SET / STAT_GET), as iproute2's rdma tool does. A driver without
 * per-QP counters refuses the binding (rxe: ENOMEM), and so does a caller without
 * CAP_NET_ADMIN (EPERM): the run is then refused with the kernel's reason. A counter
 * bound to a QP is freed by the kernel with the QP. */
#pragma once

#include "control/hw_counters.h"

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rp {

/* How many QPs a run may ask per-QP counters for: each is a netlink round trip per
 * scrape and some ten series (docs/metrics.md, cardinality). */
inline constexpr size_t kMetricsQpMax = 256;

struct QpCounter {
	uint32_t dev_index = 0;   // the kernel's (ibv_get_device_index)
	uint32_t port = 0;
	uint32_t qpn = 0;
	uint32_t id = 0;          // the counter the kernel bound (rdma statistic qp show: cntn)
};

/* Binds a counter of its own to qp (an RC or UC QP past INIT). Returns 0, or -1 with
 * *err naming the device, port, QP and the kernel's reason. */
int qp_counter_bind(ibv_qp *qp, QpCounter *out, std::string *err);

/* Reads c's counters now. Returns 0, or -1 with *err. */
int qp_counter_read(const QpCounter &c, HwCounters *out, std::string *err);

/* The messages, built and parsed apart from the socket for the unit tests. A request:
 * cmd (RDMA_NLDEV_CMD_*) with u32 attributes {type, value}. */
std::vector<uint8_t> nldev_request(uint16_t cmd, uint32_t seq, const std::vector<std::pair<uint16_t, uint32_t>> &attrs);
/* A reply's u32 attribute at the top level (false: absent). */
bool nldev_u32(const uint8_t *msg, size_t len, uint16_t type, uint32_t *out);
/* A reply's hw counters (RDMA_NLDEV_ATTR_STAT_HWCOUNTERS), sorted by name. */
bool nldev_hwcounters(const uint8_t *msg, size_t len, HwCounters *out);

} // namespace rp
