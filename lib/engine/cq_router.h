/* One lcore's shared CQ serves the QPs of every role on the lcore (the requesters and
 * responders of several flows). Whichever role polls it hands each completion of a QP
 * it does not own to the router, which finds the owner by qp_num and calls it: the
 * router is a CqPeer for every role of the lcore. Built at setup, read-only after;
 * everything runs on the one lcore, so nothing is synchronised. */
#pragma once

#include "engine/qp_table.h"
#include "engine/verbs_ops.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rp {

/* A burst of completions a role polled from its lcore's shared CQ: its own QPs' go to
 * on_own(qi, wc), other roles' to the lcore's router (peer), any other is counted in
 * *unknown. Inlined into each role's burst. */
template <typename OnOwn>
inline void route_burst(const ibv_wc *wc, int n, const QpTable &own, const CqPeer &peer, uint64_t now, uint64_t *unknown,
			OnOwn &&on_own)
{
	for (int i = 0; i < n; i++) {
		uint32_t qi = own.find(wc[i].qp_num);
		if (qi != QpTable::kNone)
			on_own(qi, wc[i]);
		else if (peer.on_wc)
			peer.on_wc(peer.role, wc[i], now);   // another role's, on this lcore
		else
			(*unknown)++;
	}
}

class CqRouter {
public:
	using OnWc = void (*)(void *role, const ibv_wc &wc, uint64_t now);

	/* Setup: the QPs `qp_nums` belong to `role`, whose completions go to on_wc. */
	void add(OnWc on_wc, void *role, const std::vector<uint32_t> &qp_nums)
	{
		for (uint32_t q : qp_nums)
			pending_.emplace_back(q, static_cast<uint32_t>(owners_.size()));
		owners_.push_back({on_wc, role});
	}

	/* Setup, after every add(): the table. Returns 0, or -1 with *err on a duplicate. */
	int build(std::string *err)
	{
		table_.init(static_cast<uint32_t>(pending_.size()));
		for (const auto &[qp_num, owner] : pending_)
			if (!table_.insert(qp_num, owner)) {
				*err = "QP " + std::to_string(qp_num) + " is owned by two roles of one lcore";
				return -1;
			}
		pending_.clear();
		return 0;
	}

	/* The CqPeer every role of the lcore hands foreign completions to. */
	CqPeer peer() { return CqPeer{dispatch, this}; }

	uint64_t unknown() const { return unknown_; }

private:
	struct Owner {
		OnWc on_wc;
		void *role;
	};
	static void dispatch(void *router, const ibv_wc &wc, uint64_t now)
	{
		auto *r = static_cast<CqRouter *>(router);
		uint32_t o = r->table_.find(wc.qp_num);
		if (o == QpTable::kNone) {
			r->unknown_++;   // no QP of this lcore: counted, never dereferenced
			return;
		}
		r->owners_[o].on_wc(r->owners_[o].role, wc, now);
	}

	QpTable table_;
	std::vector<Owner> owners_;
	std::vector<std::pair<uint32_t, uint32_t>> pending_;
	uint64_t unknown_ = 0;
};

} // namespace rp
