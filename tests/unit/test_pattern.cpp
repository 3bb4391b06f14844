/* Payload pattern: round trip at every size around word boundaries, and any single
 * flipped byte or wrong sequence number is caught at the right offset. */
#include "engine/pattern.h"
#include "engine/pattern_match.h"

#include <rte_cpuflags.h>

#include "cmocka_cpp.h"

#include <cstring>
#include <vector>

namespace {

void round_trip(void **)
{
	for (size_t len = 1; len <= 130; len++) {
		std::vector<unsigned char> b(len);
		rp::pattern_fill(b.data(), len, 12345);
		assert_int_equal(rp::pattern_check(b.data(), len, 12345), -1);
	}
}

/* The format is the two-host contract (kCmVersion): word i of message seq is its
 * base plus (i + 1) steps, little-endian, the tail a prefix of the next word,
 * whichever way the fill goes about it. */
void every_word_is_the_contract(void **)
{
	for (size_t len = 1; len <= 130; len++) {
		std::vector<unsigned char> b(len);
		rp::pattern_fill(b.data(), len, 4242);
		for (size_t i = 0; 8 * i < len; i++) {
			uint64_t want = rp::pattern_base(4242) + (i + 1) * rp::kPatternStep, got = 0;
			size_t n = len - 8 * i < 8 ? len - 8 * i : 8;
			memcpy(&got, b.data() + 8 * i, n);
			if (n < 8)
				want &= (1ull << (8 * n)) - 1;
			assert_int_equal(got, want);
			assert_int_equal(rp::pattern_word(4242, i) & (n < 8 ? (1ull << (8 * n)) - 1 : ~0ull), want);
		}
	}
}

void every_flipped_byte_is_found(void **)
{
	for (size_t len : {1, 7, 8, 9, 64, 65, 4096}) {
		std::vector<unsigned char> b(len);
		rp::pattern_fill(b.data(), len, 77);
		for (size_t off = 0; off < len; off++) {
			b[off] ^= 0x01;
			assert_int_equal(rp::pattern_check(b.data(), len, 77), static_cast<ptrdiff_t>(off));
			b[off] ^= 0x01;
		}
	}
}

void other_sequence_fails(void **)
{
	/* A stale or misplaced message (another seq in this slot) must not pass. */
	for (uint64_t seq = 0; seq < 1000; seq++) {
		unsigned char a[8], b[8];
		rp::pattern_fill(a, sizeof(a), seq);
		rp::pattern_fill(b, sizeof(b), seq + 1);
		assert_memory_not_equal(a, b, sizeof(a));
		assert_int_not_equal(rp::pattern_check(a, sizeof(a), seq + 1024), -1);
	}
}

void zero_buffer_fails(void **)
{
	std::vector<unsigned char> b(64, 0);
	assert_int_not_equal(rp::pattern_check(b.data(), b.size(), 0), -1);
}

} // namespace

/* The receive burst's check (pattern_match.h), in each variant this CPU has: every
 * length around the vectors', blocks' and words' edges matches, from an unaligned
 * start; one byte flipped (low bit or high) at every position, in every vector compare
 * and in the tail, fails it; so does another key; a byte past the end does not. */
void matches_catches_every_byte(void **)
{
	std::vector<rp::PatternMatcher> variants{rp::PatternMatcher::baseline};
	if (rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0)
		variants.push_back(rp::PatternMatcher::avx2);
	for (size_t len : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 100, 128, 255, 256, 257, 300, 4096}) {
		std::vector<unsigned char> b(len + 2);
		unsigned char *p = b.data() + 1;
		rp::pattern_fill(p, len, 777);
		for (rp::PatternMatcher m : variants) {
			assert_true(rp::pattern_matches(m, p, len, 777));
			assert_false(rp::pattern_matches(m, p, len, 778));
			p[len] ^= 0xff;
			assert_true(rp::pattern_matches(m, p, len, 777));
			p[len] ^= 0xff;
			for (size_t i = 0; i < len; i++)
				for (unsigned char bit : {0x01, 0x80}) {
					p[i] ^= bit;
					if (rp::pattern_matches(m, p, len, 777))
						fail_msg("variant %d, %zu B: byte %zu flipped (0x%02x) not caught", static_cast<int>(m),
							 len, i, bit);
					p[i] ^= bit;
				}
		}
	}
}

/* The chosen variant: the baseline below eight blocks, AVX2 from there where the CPU
 * has it. */
void matcher_by_size(void **)
{
	const bool avx2 = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	assert_int_equal(static_cast<int>(rp::pattern_matcher(64)), static_cast<int>(rp::PatternMatcher::baseline));
	assert_int_equal(static_cast<int>(rp::pattern_matcher(4096)),
			 static_cast<int>(avx2 ? rp::PatternMatcher::avx2 : rp::PatternMatcher::baseline));
}

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(every_word_is_the_contract),
		cmocka_unit_test(every_flipped_byte_is_found),
		cmocka_unit_test(other_sequence_fails),
		cmocka_unit_test(zero_buffer_fails),
		cmocka_unit_test(matches_catches_every_byte),
		cmocka_unit_test(matcher_by_size),
	};
	return cmocka_run_group_tests_name("pattern", tests, nullptr, nullptr);
}
