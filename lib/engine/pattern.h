/* Payload pattern: every byte of message `seq` is a function of (seq, offset), so the
 * receiver can check a message without any header and a stale, misplaced or corrupted
 * payload is caught. Word-at-a-time, an add per word: the check costs far less than the
 * transfer. The format is part of the two-host wire contract (kCmVersion). */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rp {

/* Message seq's base: a multiply-xorshift mix of seq, a bijection (two messages never
 * share one). */
inline uint64_t pattern_base(uint64_t seq)
{
	uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	return x ^ (x >> 29);
}

inline constexpr uint64_t kPatternStep = 0xBF58476D1CE4E5B9ull;   // odd: i -> i * step is a bijection

/* 64-bit word `i` of message `seq`: its base plus (i + 1) steps. Every word of another
 * message differs at the same offset (another base), and a word moved within a message
 * differs from the one it replaced (another step count); the mix is once per message,
 * an add per word (the fill and the check cost about as much as copying the payload). */
inline uint64_t pattern_word(uint64_t seq, uint64_t i)
{
	return pattern_base(seq) + (i + 1) * kPatternStep;
}

/* Four words at a time, as two vectors of two (SSE2 or NEON, the baseline): each lane
 * is the base plus its own steps, all advance by four steps. The fill and the check
 * are most of a small message's cost at each end; this makes them a few instructions
 * per 32 bytes. */
inline constexpr uint64_t kPatternStep4 = 4 * kPatternStep;
typedef uint64_t PatternPair __attribute__((vector_size(16)));

struct PatternQuad {
	PatternPair lo, hi;   // words 4q, 4q + 1 and 4q + 2, 4q + 3
	explicit PatternQuad(uint64_t base)
	{
		const PatternPair b = {base, base};   // one splat, two vector adds of constants
		lo = b + PatternPair{kPatternStep, 2 * kPatternStep};
		hi = b + PatternPair{3 * kPatternStep, kPatternStep4};
	}
	void next() { lo += kPatternStep4; hi += kPatternStep4; }
};

inline void pattern_fill(void *buf, size_t len, uint64_t seq)
{
	auto *p = static_cast<unsigned char *>(buf);
	const size_t words = len / 8, quads = words / 4;
	const uint64_t base = pattern_base(seq);
	PatternQuad v(base);
	for (size_t q = 0; q < quads; q++, p += 32, v.next()) {
		memcpy(p, &v.lo, 16);
		memcpy(p + 16, &v.hi, 16);
	}
	uint64_t w = base + 4 * quads * kPatternStep;
	for (size_t i = 4 * quads; i < words; i++, p += 8) {
		w += kPatternStep;
		memcpy(p, &w, 8);
	}
	if (len % 8) {
		w += kPatternStep;
		memcpy(p, &w, len % 8);
	}
}

/* The slow path of pattern_check, once a difference is known: where it is. */
[[gnu::noinline, gnu::cold]] inline ptrdiff_t pattern_first_difference(const void *buf, size_t len, uint64_t seq)
{
	const auto *p = static_cast<const unsigned char *>(buf);
	size_t words = len / 8;
	for (size_t i = 0; i <= words; i++) {
		size_t n = i < words ? 8 : len % 8;
		if (n == 0)
			break;
		uint64_t want = pattern_word(seq, i), got = 0;
		memcpy(&got, p + 8 * i, n);
		if (n < 8)
			want &= (1ull << (8 * n)) - 1;
		if (got != want) {
			for (size_t b = 0; b < n; b++)
				if (p[8 * i + b] != reinterpret_cast<const unsigned char *>(&want)[b])
					return static_cast<ptrdiff_t>(8 * i + b);
		}
	}
	return -1;
}

/* Returns the offset of the first byte that differs from message seq's pattern,
 * or -1 when the whole payload matches. Every message is checked: the common case
 * (all match) is whole words or'ed into one difference, no branch per word. */
inline ptrdiff_t pattern_check(const void *buf, size_t len, uint64_t seq)
{
	const auto *p = static_cast<const unsigned char *>(buf);
	const size_t words = len / 8, quads = words / 4, tail = len % 8;
	const uint64_t base = pattern_base(seq);
	PatternQuad want(base);
	PatternPair d{};
	for (size_t q = 0; q < quads; q++, p += 32, want.next()) {
		PatternPair lo, hi;
		memcpy(&lo, p, 16);
		memcpy(&hi, p + 16, 16);
		d |= (lo ^ want.lo) | (hi ^ want.hi);
	}
	uint64_t diff = d[0] | d[1], w = base + 4 * quads * kPatternStep;
	for (size_t i = 4 * quads; i < words; i++, p += 8) {
		uint64_t got;
		memcpy(&got, p, 8);
		w += kPatternStep;
		diff |= got ^ w;
	}
	if (tail) {
		w += kPatternStep;
		unsigned char t[8];
		memcpy(t, &w, 8);
		for (size_t i = 0; i < tail; i++)
			diff |= p[i] ^ t[i];
	}
	return diff == 0 ? -1 : pattern_first_difference(buf, len, seq);
}

} // namespace rp

namespace rp {

/* The self-describing format of messages handed between stages (gen, verify, a relay):
 * word 0 is the message's key, the rest that key's pattern, so a message can be checked
 * with nothing else to go on. len >= 8. */
inline void self_describing_fill(void *buf, size_t len, uint64_t key)
{
	memcpy(buf, &key, sizeof(key));
	pattern_fill(static_cast<unsigned char *>(buf) + 8, len - 8, key);
}

/* Its key in *key, and the offset (from buf) of the first byte that differs from the
 * key's pattern, or -1. */
inline ptrdiff_t self_describing_check(const void *buf, size_t len, uint64_t *key)
{
	memcpy(key, buf, sizeof(*key));
	ptrdiff_t bad = pattern_check(static_cast<const unsigned char *>(buf) + 8, len - 8, *key);
	return bad >= 0 ? bad + 8 : -1;
}

/* The pattern key of message `seq` on QP `qp_index` of a flow: distinct per QP, so a
 * message delivered on the wrong QP or into another QP's slot fails its check. */
inline uint64_t msg_key(uint32_t qp_index, uint64_t seq)
{
	return seq ^ (static_cast<uint64_t>(qp_index) << 44);
}

} // namespace rp
