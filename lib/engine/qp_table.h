/* qp_num -> QP index of an lcore's flow: completions from the shared CQs carry only
 * wc.qp_num. Sized and filled at setup, read-only on the fast path. Providers number a
 * process's QPs close together (rxe and mlx5 hand them out in order), so while the QPs'
 * numbers span at most kDenseSpan, a find is one subtraction, one compare and one load
 * (a dense array indexed by qp_num - lo); else open addressing. */
#pragma once

#include <cstdint>
#include <memory>

namespace rp {

class QpTable {
public:
	static constexpr uint32_t kNone = UINT32_MAX;

	static constexpr uint32_t kDenseSpan = 4096;

	/* Setup: room for n QPs at a load factor of at most 1/2. */
	void init(uint32_t n)
	{
		dense_.reset();
		cap_ = 1;
		while (cap_ < 2 * n)
			cap_ <<= 1;
		inserted_ = 0;
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
				densify(qp_num);
				return true;
			}
		}
	}

	/* The table as a burst holds it in registers: what find() reads, loaded once. */
	struct Finder {
		const uint32_t *dense;
		uint32_t lo;
		const QpTable *table;
		uint32_t find(uint32_t qp_num) const
		{
			if (dense) [[likely]] {
				const uint32_t d = qp_num - lo;
				return d < kDenseSpan ? dense[d] : kNone;
			}
			return table->find(qp_num);
		}
	};
	Finder finder() const { return {dense_.get(), lo_, this}; }

	uint32_t find(uint32_t qp_num) const
	{
		if (dense_) [[likely]] {
			const uint32_t d = qp_num - lo_;   // below lo_ wraps to beyond the span
			return d < kDenseSpan ? dense_[d] : kNone;
		}
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

	/* Setup, after each insert: the number in the dense array, kDenseSpan entries from
	 * lo_ (16 KiB), made again from the hash's slots when a number falls below lo_; none
	 * once the numbers span more than kDenseSpan (the hash serves then). */
	void densify(uint32_t qp_num)
	{
		const bool first = inserted_++ == 0;
		if (!first && !dense_)
			return;   // spread too far already
		const uint32_t lo = first || qp_num < lo_ ? qp_num : lo_;
		hi_ = first || qp_num > hi_ ? qp_num : hi_;
		if (hi_ - lo >= kDenseSpan) {
			dense_.reset();
			return;
		}
		if (dense_ && lo == lo_) {
			dense_[qp_num - lo_] = slots_[find_slot(qp_num)].index;
			return;
		}
		lo_ = lo;
		dense_.reset(new uint32_t[kDenseSpan]);
		for (uint32_t i = 0; i < kDenseSpan; i++)
			dense_[i] = kNone;
		for (uint32_t h = 0; h < cap_; h++)
			if (slots_[h].qp_num != kEmpty)
				dense_[slots_[h].qp_num - lo_] = slots_[h].index;
	}
	uint32_t find_slot(uint32_t qp_num) const
	{
		uint32_t h = hash(qp_num);
		while (slots_[h].qp_num != qp_num)
			h = (h + 1) & (cap_ - 1);
		return h;
	}

	std::unique_ptr<Slot[]> slots_;
	uint32_t cap_ = 0;
	std::unique_ptr<uint32_t[]> dense_;
	uint32_t lo_ = 0, hi_ = 0, inserted_ = 0;
};

} // namespace rp
