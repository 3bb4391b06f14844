/* A flow's RoCE traffic parameters: what its QPs' address vectors put on the wire
 * (RoCE v2: the IP header's DSCP and ECN bits from traffic_class, its TTL from
 * hop_limit, the UDP source port from the flow label) and the service level. Plain
 * data, shared by the file's and the command line's model and the QP setup. */
#pragma once

#include <cstdint>
#include <string>

struct ibv_ah_attr;
struct ibv_qp;

namespace rp {

inline constexpr int kFlowLabelMax = 0xFFFFF;   // 20 bits

struct Traffic {
	int traffic_class = -1;   // 0..255, DSCP << 2 | ECN; -1: 0 (or rdma_cm's)
	int sl = -1;              // 0..15; -1: 0 (or what rdma_cm derives from the class)
	int flow_label = -1;      // 0..0xFFFFF; -1 or 0: the provider hashes the QP numbers
	int hop_limit = -1;       // 1..255; -1: 64 (or the route's)
	bool spread = false;      // QP i takes flow_label + i (from 1 without one): a path each
	int gid_index = -1;       // the flow's local GID; -1: its device's

	/* Something for the address vector (gid_index aside). */
	bool any() const { return traffic_class >= 0 || sl >= 0 || flow_label >= 0 || hop_limit >= 0 || spread; }
	/* Flow label of the flow's QP i (-1: the provider's). */
	int label_of(uint32_t qp_index) const
	{
		if (!spread)
			return flow_label;
		const uint32_t base = flow_label > 0 ? static_cast<uint32_t>(flow_label) : 1;
		const uint32_t l = (base - 1 + qp_index) % kFlowLabelMax + 1;   // 1..0xFFFFF: 0 means "hash"
		return static_cast<int>(l);
	}
	/* "traffic_class 0x62, flow_label 101" for QP i ("flow_label 100 + QP index" for
	 * the flow: qp_index UINT32_MAX); "" when nothing is set. */
	std::string describe(uint32_t qp_index) const;
};

/* Sets in *ah what t gives for the flow's QP qp_index, leaving the rest. */
void traffic_apply(const Traffic &t, uint32_t qp_index, ibv_ah_attr *ah);

/* After RTR: what qp's address vector holds (ibv_query_qp) is what t asked for, each
 * value set. A value the kernel or the provider replaced or dropped (RoCE takes the
 * IP route's hop limit; rxe keeps no SL) fails: 0, or -EINVAL with *err naming it. */
int traffic_verify(ibv_qp *qp, const Traffic &t, uint32_t qp_index, std::string *err);

} // namespace rp
