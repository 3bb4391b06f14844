/* Latency histogram, log-linear (HdrHistogram's layout): values below 256 have a bucket
 * each; above, every power of two is split into 128 buckets, so a bucket is at most
 * 1/128 of its value wide (0.8%). Fixed size (59 KiB), no allocation, O(1) record:
 * owned and written by one lcore, read by the main lcore after it joined, and while it
 * runs by the metrics endpoint (relaxed atomics of one writer: a load and a store,
 * plain moves on x86-64, never torn). Values are nanoseconds here, but the histogram
 * does not care. */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rp {

class Histogram {
public:
	static constexpr unsigned kSubBits = 7;                  // 128 buckets per power of two
	static constexpr uint64_t kLinear = 2ull << kSubBits;    // values 0..255: exact
	static constexpr size_t kBuckets = kLinear + (64 - kSubBits - 1) * (1u << kSubBits);

	void record(uint64_t v)
	{
		bump(counts_[index(v)], 1);
		bump(count_, 1);
		bump(sum_, v);
		if (v < min_.load(kRelaxed))
			min_.store(v, kRelaxed);
		if (v > max_.load(kRelaxed))
			max_.store(v, kRelaxed);
	}

	void clear()
	{
		for (auto &c : counts_)
			c.store(0, kRelaxed);
		count_.store(0, kRelaxed);
		sum_.store(0, kRelaxed);
		min_.store(UINT64_MAX, kRelaxed);
		max_.store(0, kRelaxed);
	}

	uint64_t count() const { return count_.load(kRelaxed); }
	uint64_t sum() const { return sum_.load(kRelaxed); }
	uint64_t min() const { return count() ? min_.load(kRelaxed) : 0; }
	uint64_t max() const { return max_.load(kRelaxed); }
	double mean() const
	{
		const uint64_t n = count();
		return n ? static_cast<double>(sum()) / static_cast<double>(n) : 0.0;
	}

	/* The smallest recorded-bucket value v such that at least q (0..1] of the samples
	 * are <= v: the bucket's upper bound, clamped to the largest value recorded (what
	 * HdrHistogram calls the highest equivalent value). 0 when empty. */
	uint64_t percentile(double q) const
	{
		const uint64_t n = count(), mx = max();
		if (n == 0)
			return 0;
		if (q <= 0)
			return min();
		double want_d = q * static_cast<double>(n);
		uint64_t want = static_cast<uint64_t>(want_d);
		if (static_cast<double>(want) < want_d)
			want++;   // ceil: the rank of the q-th sample
		if (want == 0)
			want = 1;
		uint64_t seen = 0;
		for (size_t i = 0; i < kBuckets; i++) {
			seen += bucket_count(i);
			if (seen >= want) {
				uint64_t hi = upper(i);
				return hi < mx ? hi : mx;
			}
		}
		return mx;
	}

	/* Samples in bucket i (0..kBuckets-1), for writing the histogram out after the run. */
	uint64_t bucket_count(size_t i) const { return counts_[i].load(kRelaxed); }

	/* Bucket layout, exposed for tests and for the results file's latency_hist. */
	static size_t index(uint64_t v)
	{
		if (v < kLinear)
			return static_cast<size_t>(v);
		unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(v));   // >= kSubBits + 1
		unsigned shift = msb - kSubBits;                                  // >= 1
		uint64_t mant = v >> shift;                                       // 128..255
		return static_cast<size_t>(kLinear + (shift - 1) * (1u << kSubBits) + (mant - (1u << kSubBits)));
	}
	static uint64_t lower(size_t i)
	{
		if (i < kLinear)
			return i;
		size_t k = i - kLinear;
		unsigned shift = static_cast<unsigned>(k >> kSubBits) + 1;
		uint64_t mant = (1u << kSubBits) + (k & ((1u << kSubBits) - 1));
		return mant << shift;
	}
	static uint64_t upper(size_t i)
	{
		return i + 1 < kBuckets ? lower(i + 1) - 1 : UINT64_MAX;
	}

private:
	static constexpr auto kRelaxed = std::memory_order_relaxed;
	static void bump(std::atomic<uint64_t> &a, uint64_t by) { a.store(a.load(kRelaxed) + by, kRelaxed); }   // one writer

	std::atomic<uint64_t> counts_[kBuckets] = {};
	std::atomic<uint64_t> count_{0};
	std::atomic<uint64_t> sum_{0};
	std::atomic<uint64_t> min_{UINT64_MAX};
	std::atomic<uint64_t> max_{0};
};

} // namespace rp
