/* Latency histogram: bucket layout without gaps or overlaps, every value inside its
 * bucket within the promised relative width, and percentiles against a sorted array. */
#include "engine/histogram.h"

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "cmocka_cpp.h"   // last: it defines fail(), which <random>'s iostreams use

namespace {

using rp::Histogram;

void layout_is_contiguous(void **)
{
	assert_int_equal(Histogram::lower(0), 0);
	for (size_t i = 0; i + 1 < Histogram::kBuckets; i++)
		assert_true(Histogram::upper(i) + 1 == Histogram::lower(i + 1));
	assert_true(Histogram::upper(Histogram::kBuckets - 1) == UINT64_MAX);
	assert_int_equal(Histogram::index(UINT64_MAX), Histogram::kBuckets - 1);
}

void values_land_in_their_bucket(void **)
{
	std::mt19937_64 rng(7);
	for (int k = 0; k < 200000; k++) {
		uint64_t v = rng() >> (rng() % 64);
		size_t i = Histogram::index(v);
		assert_true(i < Histogram::kBuckets);
		assert_true(Histogram::lower(i) <= v && v <= Histogram::upper(i));
		/* A bucket is at most 1/128 of its values wide (exact below 256). */
		uint64_t width = Histogram::upper(i) - Histogram::lower(i);
		if (v < Histogram::kLinear)
			assert_int_equal(width, 0);
		else
			assert_true(width <= v / 128);
	}
}

void percentiles_match_sorted_samples(void **)
{
	auto h = std::make_unique<Histogram>();
	assert_int_equal(h->percentile(0.5), 0);   // empty
	std::mt19937_64 rng(11);
	std::lognormal_distribution<double> lat(9.5, 0.6);   // around 13 us, in ns
	std::vector<uint64_t> v;
	for (int k = 0; k < 100001; k++) {
		uint64_t x = static_cast<uint64_t>(lat(rng));
		v.push_back(x);
		h->record(x);
	}
	std::sort(v.begin(), v.end());
	assert_int_equal(h->count(), v.size());
	assert_int_equal(h->min(), v.front());
	assert_int_equal(h->max(), v.back());
	assert_int_equal(h->percentile(1.0), v.back());
	for (double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
		size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);   // ceil
		uint64_t exact = v[rank - 1];
		uint64_t got = h->percentile(q);
		/* Never below the true value, and above it by at most one bucket width. */
		assert_true(got >= exact);
		assert_true(got - exact <= exact / 128);
	}
}

void small_exact_values(void **)
{
	auto h = std::make_unique<Histogram>();
	for (uint64_t x : {5, 1, 3, 2, 4})
		h->record(x);
	assert_int_equal(h->percentile(0.5), 3);
	assert_int_equal(h->percentile(0.2), 1);
	assert_int_equal(h->percentile(0.21), 2);
	assert_int_equal(h->percentile(1.0), 5);
	assert_true(h->mean() == 3.0);
	h->clear();
	assert_int_equal(h->count(), 0);
	assert_int_equal(h->max(), 0);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(layout_is_contiguous),
		cmocka_unit_test(values_land_in_their_bucket),
		cmocka_unit_test(percentiles_match_sorted_samples),
		cmocka_unit_test(small_exact_values),
	};
	return cmocka_run_group_tests_name("histogram", tests, nullptr, nullptr);
}
