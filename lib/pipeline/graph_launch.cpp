/* Running a built pipeline: each lcore's job, and what main reads or stops while and after
 * they run. */
#include "pipeline/graph_internal.h"

namespace rp {

namespace {

double thread_cpu_s()
{
	timespec t{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

/* Its thread's CPU clock for the control plane, which reads it while the lcore runs. */
void publish_cpu_clock(LcoreCpu *c, double now_s)
{
	clockid_t clock;
	if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
		return;
	c->clock = clock;
	c->start_s = now_s;
	c->set.store(true, std::memory_order_release);
}

} // namespace

int graph_lcore_run(void *arg)
{
	auto *l = static_cast<GraphLcore *>(arg);
	double cpu0 = thread_cpu_s();
	publish_cpu_clock(&l->cpu, cpu0);
	for (GraphFlow *f : l->requesters)
		requester_start(&f->requester);
	for (GraphFlow *f : l->responders)
		responder_start(&f->responder);
	for (GraphFlow *f : l->pingers)
		pingpong_start(&f->ping);
	for (GraphFlow *f : l->echoers)
		pingpong_start(&f->pong);
	for (GraphLane *ln : l->lanes)
		requester_start(&ln->requester);
	int rc = lcore_loop_run(&l->loop);   // the RDMA stages finish their roles
	for (uint32_t i = 0; i < l->loop.nstages; i++)
		if (l->loop.stages[i]->rc != 0)
			rc = -1;
	l->rc = rc;
	l->cpu_s = thread_cpu_s() - cpu0;
	l->done.store(true, std::memory_order_release);
	return rc;
}

uint64_t graph_buffers_out(const Graph &g)
{
	uint64_t out = 0;
	for (const auto &f : g.flows) {
		if (f->objs->tx_pool)
			out += rte_mempool_in_use_count(f->objs->tx_pool) -
			       (f->objs->tx_pool == g.squeezed_from ? g.squeezed.size() : 0);
		for (const auto &lane : f->lanes)
			if (lane->objs && lane->objs->tx_pool)
				out += rte_mempool_in_use_count(lane->objs->tx_pool);
	}
	for (const auto &l : g.lcores)
		if (l->rx_pool) {
			uint64_t used = rte_mempool_in_use_count(l->rx_pool), posted = l->refill.posted();
			out += used > posted ? used - posted : 0;
		}
	return out;
}

unsigned graph_stop_flows_on(const Graph &g, const Device *dev, uint8_t port, const char *why)
{
	auto on = [&](const GraphLcore *l) { return l && l->dev == dev && (port == 0 || dev->port == port); };
	unsigned n = 0;
	for (const auto &f : g.flows) {
		bool uses = on(f->tx) || on(f->rx);
		for (const auto &lane : f->lanes)
			uses |= on(lane->lcore);
		if (uses) {
			f->ctl.abort_with(why);
			n++;
		}
	}
	return n;
}

} // namespace rp
