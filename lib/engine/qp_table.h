/* qp_num -> QP index of an lcore's flow: completions from the shared CQs carry only
 * wc.qp_num. Open addressing, sized and filled at setup, read-only on the fast path. */
#pragma once

#include <cstdint>
#include <memory>

namespace rp {

class QpTable {
public:
	static constexpr uint32_t kNone = UINT32_MAX;

	/* Setup: room for n QPs at a load factor of at most 1/2. */
	void init(uint32_t n)
	{
		cap_ = 1;
		while (cap_ < 2 * n)
			cap_ <<= 1;
		slots_.reset(new Slot[cap_]);
		for (uint32_t i = 0; i < cap_; i++)
			slots_[i] = {kEmpty, kNone};
	}

	/* Setup. Returns false on a duplicate qp_num. */
	bool insert(uint32_t qp_num, uint32_t index)
	{
		for (uint32_t h = hash(qp_num);; h = (h + 1) & (cap_ - 1)) {
			if (slots_[h].qp_num == qp_num)
				return false;
			if (slots_[h].qp_num == kEmpty) {
				slots_[h] = {qp_num, index};
				return true;
			}
		}
	}

	uint32_t find(uint32_t qp_num) const
	{
		for (uint32_t h = hash(qp_num);; h = (h + 1) & (cap_ - 1)) {
			if (slots_[h].qp_num == qp_num)
				return slots_[h].index;
			if (slots_[h].qp_num == kEmpty)
				return kNone;
		}
	}

private:
	static constexpr uint32_t kEmpty = UINT32_MAX;   // qp_num is 24 bits: never this
	struct Slot {
		uint32_t qp_num;
		uint32_t index;
	};
	uint32_t hash(uint32_t qp_num) const { return (qp_num * 0x9E3779B1u) >> 8 & (cap_ - 1); }

	std::unique_ptr<Slot[]> slots_;
	uint32_t cap_ = 0;
};

} // namespace rp
