/* Whether a payload is message `key`'s pattern (pattern.h): the receive burst's check.
 * Whole 32-byte blocks are xor'ed against the pattern in vectors and or'ed into one
 * difference, tested once per message; the tail past the blocks in words and one
 * masked partial word. Two variants, chosen once at setup (pattern_matcher): GCC's
 * 16-byte vectors (SSE2 or NEON, the baseline), inlined into the burst, and AVX2 where
 * DPDK's CPU flags report it, out of line. Where a payload does not match, the slow
 * path's pattern_check says at which byte. */
#pragma once

#include "engine/pattern.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rp {

/* The bytes past the whole blocks (len < 32), w the pattern word before p's: their
 * difference or'ed. */
inline uint64_t pattern_tail_diff(const unsigned char *p, size_t len, uint64_t w)
{
	uint64_t diff = 0;
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t got;
		memcpy(&got, p, 8);
		w += kPatternStep;
		diff |= got ^ w;
	}
	if (len) {
		uint64_t got = 0;
		memcpy(&got, p, len);   // little-endian: the message's bytes are w's low ones
		w += kPatternStep;
		diff |= (got ^ w) & ((1ull << (8 * len)) - 1);
	}
	return diff;
}

/* The baseline variant: two 16-byte vectors per 32-byte block, two blocks a turn.
 * Tail = false: len is a multiple of 32 (set at setup, pattern_has_tail), and the
 * tail's code, and what a caller's loop would prepare for it, is left out. */
template <bool Tail = true>
[[gnu::always_inline]] inline bool pattern_matches(const void *buf, size_t len, uint64_t key)
{
	const auto *p = static_cast<const unsigned char *>(buf);
	const uint64_t base = pattern_base(key);
	const size_t blocks = len / 32;
	PatternQuad want(base);
	PatternPair d{};
#pragma GCC unroll 2
	for (size_t b = 0; b < blocks; b++, p += 32, want.next()) {
		PatternPair lo, hi;
		memcpy(&lo, p, 16);
		memcpy(&hi, p + 16, 16);
		d |= (lo ^ want.lo) | (hi ^ want.hi);
	}
	uint64_t diff = d[0] | d[1];
	if (Tail && len % 32)
		diff |= pattern_tail_diff(p, len % 32, base + 4 * blocks * kPatternStep);
	return diff == 0;
}

/* The AVX2 variant (pattern_match.cpp): one 32-byte vector per block. Call it only
 * where pattern_matcher chose it. */
bool pattern_matches_avx2(const void *buf, size_t len, uint64_t key);

enum class PatternMatcher : uint8_t { baseline, avx2 };

/* Setup: the variant for messages of len bytes on this CPU. AVX2 where the CPU has it
 * and a message has at least eight blocks (below that the call costs what it saves:
 * tools/rx-bench --check). */
PatternMatcher pattern_matcher(size_t len);

/* Whether messages of len bytes have bytes past their whole 32-byte blocks. */
constexpr bool pattern_has_tail(size_t len) { return len % 32 != 0; }

/* The chosen variant: a branch the predictor always gets right. */
template <bool Tail = true>
[[gnu::always_inline]] inline bool pattern_matches(PatternMatcher m, const void *buf, size_t len, uint64_t key)
{
	return m == PatternMatcher::avx2 ? pattern_matches_avx2(buf, len, key) : pattern_matches<Tail>(buf, len, key);
}

} // namespace rp
