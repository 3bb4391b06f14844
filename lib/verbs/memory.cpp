#include "verbs/memory.h"

#include "verbs/device.h"

#include <rte_malloc.h>
#include <rte_mempool.h>

#include <cerrno>
#include <cstring>

namespace rp {

namespace {

struct IterCtx {
	Device *dev;
	int access;
	MrTable *t;
	int err;
	std::string msg;
};

void reg_chunk(rte_mempool *mp, void *opaque, rte_mempool_memhdr *memhdr, unsigned /*idx*/)
{
	auto *c = static_cast<IterCtx *>(opaque);
	if (c->err)
		return;
	if (c->t->n == kMaxMrChunks) {
		c->err = E2BIG;
		c->msg = std::string("mempool ") + mp->name + ": more than " + std::to_string(kMaxMrChunks) +
			 " memory chunks to register";
		return;
	}
	ibv_mr *mr = ibv_reg_mr(c->dev->pd, memhdr->addr, memhdr->len, c->access);
	if (mr == nullptr) {
		c->err = errno;
		c->msg = std::string("mempool ") + mp->name + ": ibv_reg_mr of " + std::to_string(memhdr->len) +
			 " bytes on " + c->dev->name + ": " + strerror(errno);
		return;
	}
	auto base = reinterpret_cast<uintptr_t>(memhdr->addr);
	c->t->chunks[c->t->n] = {base, base + memhdr->len, mr->lkey};
	c->t->mrs[c->t->n++] = mr;
}

} // namespace

int mr_register_mempool(Device &dev, rte_mempool *mp, int access, MrTable *t, std::string *err)
{
	IterCtx c{&dev, access, t, 0, {}};
	rte_mempool_mem_iter(mp, reg_chunk, &c);
	if (c.err) {
		mr_table_release(t);
		*err = c.msg;
		return -c.err;
	}
	return 0;
}

void mr_table_release(MrTable *t)
{
	for (unsigned i = 0; i < t->n; i++)
		ibv_dereg_mr(t->mrs[i]);
	t->n = 0;
}

int registered_buf_alloc(Device &dev, const char *what, size_t len, int access, RegisteredBuf *b,
			 std::string *err)
{
	b->addr = rte_zmalloc(what, len, RTE_CACHE_LINE_SIZE);
	if (b->addr == nullptr) {
		*err = std::string(what) + ": rte_zmalloc of " + std::to_string(len) +
		       " bytes failed (too little EAL memory? raise -m or hugepages)";
		return -ENOMEM;
	}
	b->len = len;
	b->mr = ibv_reg_mr(dev.pd, b->addr, len, access);
	if (b->mr == nullptr) {
		int e = errno;
		*err = std::string(what) + ": ibv_reg_mr of " + std::to_string(len) + " bytes on " + dev.name +
		       ": " + strerror(e);
		rte_free(b->addr);
		b->addr = nullptr;
		return -e;
	}
	return 0;
}

void registered_buf_free(RegisteredBuf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	rte_free(b->addr);
	*b = RegisteredBuf{};
}

} // namespace rp
