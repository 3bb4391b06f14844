/* Memory registration: rte_mempool chunks and plain DPDK zones become MRs, with the
 * least access each use needs. The lkey table is read on the fast path. */
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

struct rte_mempool;

namespace rp {

struct Device;

/* A mempool usually sits in one chunk (hugepages) and never in more than a handful. */
inline constexpr unsigned kMaxMrChunks = 16;

struct MrTable {
	struct Chunk {
		uintptr_t base;
		uintptr_t end;
		uint32_t lkey;
	};
	Chunk chunks[kMaxMrChunks];
	ibv_mr *mrs[kMaxMrChunks];
	unsigned n = 0;

	/* lkey of the chunk holding addr; UINT32_MAX when addr is not registered. */
	uint32_t lkey_of(const void *addr) const
	{
		auto a = reinterpret_cast<uintptr_t>(addr);
		for (unsigned i = 0; i < n; i++)
			if (a >= chunks[i].base && a < chunks[i].end)
				return chunks[i].lkey;
		return UINT32_MAX;
	}
};

/* Registers every memory chunk of `mp`. Returns 0 or -errno with *err naming the pool. */
int mr_register_mempool(Device &dev, rte_mempool *mp, int access, MrTable *t, std::string *err);
void mr_table_release(MrTable *t);

/* A registered, zeroed, cache-aligned buffer from DPDK memory (hugepages when EAL has them). */
struct RegisteredBuf {
	void *addr = nullptr;
	size_t len = 0;
	ibv_mr *mr = nullptr;
};

int registered_buf_alloc(Device &dev, const char *what, size_t len, int access, RegisteredBuf *b,
			 std::string *err);
void registered_buf_free(RegisteredBuf *b);

} // namespace rp
