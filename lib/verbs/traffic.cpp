#include "verbs/traffic.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace rp {

std::string Traffic::describe(uint32_t qp_index) const
{
	std::string s;
	auto add = [&](const char *k, int v, bool hex) {
		if (v < 0)
			return;
		char b[48];
		snprintf(b, sizeof(b), hex ? "%s%s 0x%x" : "%s%s %d", s.empty() ? "" : ", ", k, v);
		s += b;
	};
	add("traffic_class", traffic_class, true);
	add("sl", sl, false);
	if (qp_index == UINT32_MAX && spread) {
		add("flow_label", label_of(0), false);
		s += " + QP index";
	} else {
		add("flow_label", label_of(qp_index), false);
	}
	add("hop_limit", hop_limit, false);
	add("gid_index", gid_index, false);
	return s;
}

void traffic_apply(const Traffic &t, uint32_t qp_index, ibv_ah_attr *ah)
{
	if (t.traffic_class >= 0)
		ah->grh.traffic_class = static_cast<uint8_t>(t.traffic_class);
	if (t.sl >= 0)
		ah->sl = static_cast<uint8_t>(t.sl);
	if (const int l = t.label_of(qp_index); l >= 0)
		ah->grh.flow_label = static_cast<uint32_t>(l);
	if (t.hop_limit >= 0)
		ah->grh.hop_limit = static_cast<uint8_t>(t.hop_limit);
	if (t.gid_index >= 0)
		ah->grh.sgid_index = static_cast<uint8_t>(t.gid_index);
}

int traffic_verify(ibv_qp *qp, const Traffic &t, uint32_t qp_index, std::string *err)
{
	if (!t.any())
		return 0;
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	if (int ret = ibv_query_qp(qp, &a, IBV_QP_AV, &ia); ret != 0) {
		*err = "QP " + std::to_string(qp->qp_num) + ": ibv_query_qp (its address vector): " + strerror(ret);
		return -ret;
	}
	const ibv_ah_attr &ah = a.ah_attr;
	struct {
		const char *key;
		int want, got;
		const char *why;
	} f[] = {
		{"traffic_class", t.traffic_class, ah.grh.traffic_class, ""},
		{"sl", t.sl, ah.sl, " (rxe, for one, keeps no service level)"},
		{"flow_label", t.label_of(qp_index), static_cast<int>(ah.grh.flow_label), ""},
		{"hop_limit", t.hop_limit, ah.grh.hop_limit,
		 " (on RoCE the kernel takes the IP route's hop limit: set it there, ip route ... hoplimit N, or "
		 "net.ipv4.ip_default_ttl)"},
	};
	for (const auto &x : f)
		if (x.want >= 0 && x.want != x.got) {
			*err = "QP " + std::to_string(qp->qp_num) + ": " + x.key + " " + std::to_string(x.want) +
			       " did not take: its address vector holds " + std::to_string(x.got) + x.why;
			return -EINVAL;
		}
	return 0;
}

} // namespace rp
