/* The AVX2 variant of pattern_matches (pattern_match.h), and the choice between them. */
#include "engine/pattern_match.h"

#include <rte_cpuflags.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rp {

#if defined(__x86_64__)
__attribute__((target("avx2"))) bool pattern_matches_avx2(const void *buf, size_t len, uint64_t key)
{
	const auto *p = static_cast<const unsigned char *>(buf);
	const uint64_t base = pattern_base(key);
	const size_t blocks = len / 32;
	auto ll = [](uint64_t x) { return static_cast<long long>(x); };
	__m256i want = _mm256_add_epi64(_mm256_set1_epi64x(ll(base)), _mm256_setr_epi64x(ll(kPatternStep), ll(2 * kPatternStep),
											ll(3 * kPatternStep), ll(kPatternStep4)));
	const __m256i inc = _mm256_set1_epi64x(ll(kPatternStep4));
	__m256i d = _mm256_setzero_si256();
	for (size_t b = 0; b < blocks; b++, p += 32) {
		d = _mm256_or_si256(d, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)), want));
		want = _mm256_add_epi64(want, inc);
	}
	if (!_mm256_testz_si256(d, d))
		return false;
	return len % 32 == 0 || pattern_tail_diff(p, len % 32, base + 4 * blocks * kPatternStep) == 0;
}

PatternMatcher pattern_matcher(size_t len)
{
	return len >= 256 && rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0 ? PatternMatcher::avx2
									    : PatternMatcher::baseline;
}
#else
bool pattern_matches_avx2(const void *buf, size_t len, uint64_t key) { return pattern_matches(buf, len, key); }

PatternMatcher pattern_matcher(size_t) { return PatternMatcher::baseline; }
#endif

} // namespace rp
