/* GID selection. RoCE devices list a link-local IPv6 GID at index 0 and the RoCE v2
 * IPv4-mapped GID later (index 1 on rxe): index 0 is never assumed. */
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace rp {

inline bool gid_is_ipv4_mapped(const ibv_gid &g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	for (int i = 0; i < 12; i++)
		if (g.raw[i] != prefix[i])
			return false;
	return true;
}

/* Picks, among the GID table entries of `port`, the best for a connection that
 * routes over IP: RoCE v2 with an IPv4-mapped address, then any RoCE v2, then
 * RoCE v1, then (InfiniBand) the first entry. Returns the GID index or -1. */
inline int select_gid_index(const ibv_gid_entry *entries, size_t n, uint32_t port)
{
	int best = -1, best_rank = -1;
	for (size_t i = 0; i < n; i++) {
		const ibv_gid_entry &e = entries[i];
		if (e.port_num != port)
			continue;
		int rank;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			rank = gid_is_ipv4_mapped(e.gid) ? 3 : 2;
		else if (e.gid_type == IBV_GID_TYPE_ROCE_V1)
			rank = 1;
		else
			rank = 0;
		if (rank > best_rank || (rank == best_rank && e.gid_index < static_cast<uint32_t>(best))) {
			best = static_cast<int>(e.gid_index);
			best_rank = rank;
		}
	}
	return best;
}

} // namespace rp
