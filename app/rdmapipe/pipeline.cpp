#include "pipeline.h"

#include "pipeline/graph.h"

#include <algorithm>

namespace rp {

namespace {

std::string at(const PipelineConf &c, int line, const std::string &path)
{
	return c.file + ":" + std::to_string(line) + ": " + path + ": ";
}

const IoContextConf *context_of(const PipelineConf &c, uint32_t lcore)
{
	for (const IoContextConf &io : c.io_contexts)
		if (io.lcore == lcore)
			return &io;
	return nullptr;
}

const DeviceConf *device_of(const PipelineConf &c, const IoContextConf *io)
{
	for (const DeviceConf &d : c.devices)
		if (d.name == io->device)
			return &d;
	return nullptr;
}

/* The options of one flow f between the io contexts of its two ends (either may be
 * absent: the other host's): the builder's view of the flow (flow_run_options, which
 * keeps the command line's hooks and results files) and what the run kinds outside it
 * take from the io contexts and the device. */
RunOptions flow_options(const PipelineConf &c, const FlowConf &f, const IoContextConf *txio, const IoContextConf *rxio,
			const DeviceConf &dev, const RunOptions &cli)
{
	RunOptions r = flow_run_options(c, f, cli);
	r.device = dev.name;
	r.port = dev.port;
	r.gid_index = dev.gid_index;
	if (rxio && rxio->srq)
		r.srq_refill = rxio->srq_refill;
	r.adaptive_poll = (txio && txio->adaptive_poll) || (rxio && rxio->adaptive_poll);
	r.cq_api = (!txio || txio->cq_api == CqApi::ex) && (!rxio || rxio->cq_api == CqApi::ex) ? CqApi::ex : CqApi::classic;
	/* The file's sizes, where they are more than the engine's sizing asks for (the
	 * validator already refused the ones that are too small). */
	r.tx_send_cq = txio ? txio->send_cq : 0;
	r.rx_send_cq = rxio ? rxio->send_cq : 0;
	r.rx_recv_cq = rxio ? rxio->recv_cq : 0;
	r.rx_srq = rxio ? rxio->srq : 0;
	return r;
}

} // namespace

int pipeline_to_options(const PipelineConf &c, RunOptions *o, std::string *err)
{
	const char *later = " does not run yet in this build";
	for (size_t i = 0; i < c.stages.size(); i++) {
		const StageConf &st = c.stages[i];
		if (st.kind != StageKind::rdma_tx && st.kind != StageKind::rdma_rx) {
			*err = at(c, st.line, "stages.[" + std::to_string(i) + "]") + (st.kind == StageKind::echo ? "an " : "a ") +
			       stage_kind_name(st.kind) + " stage in a two-host pipeline" + later +
			       " (it runs with loopback flows: rdma_tx and rdma_rx or echo stages joined by rings to any others)";
			return -1;
		}
	}
	const FlowConf &f0 = c.flows[0];
	const StageConf *tx0 = nullptr, *rx0 = nullptr;
	std::vector<uint32_t> qps;
	/* loopback: both ends here; client: posts here, received on the peer's host;
	 * server: received here, posted by the client's host. */
	auto kind_of = [](const FlowConf &f) { return !f.listen.empty() ? 2 : f.peer != "loopback" ? 1 : 0; };
	const int kind = kind_of(f0);
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &f = c.flows[i];
		std::string where = at(c, f.line, "flows.[" + std::to_string(i) + "]");
		const StageConf *tx = nullptr, *rx = nullptr;
		for (const StageConf &st : c.stages)
			if (st.flow == f.name) {
				if (st.kind == StageKind::rdma_tx)
					tx = &st;
				else
					rx = &st;
			}
		if (f.sizes.size() != 1) {
			*err = where + "a list of sizes" + later;
			return -1;
		}
		if (f.transport == Transport::uc && kind_of(f) != 0) {
			*err = where + "transport uc between two hosts: rdma_cm connects RC QPs only";
			return -1;
		}
		if (i == 0) {
			tx0 = tx;
			rx0 = rx;
		} else if (kind_of(f) != kind || (f.peer != f0.peer) || (f.listen != f0.listen)) {
			*err = where + "flows of different kinds or peers in one file" + later;
			return -1;
		} else if ((tx && tx->lcore != tx0->lcore) || (rx && (rx->lcore != rx0->lcore || rx->kind != rx0->kind))) {
			*err = where + "flows on other lcores than flow '" + f0.name + "'" + later;
			return -1;
		} else if (f.verb != f0.verb || f.sizes != f0.sizes || f.batch != f0.batch || f.signal_every != f0.signal_every ||
			   f.sq_depth != f0.sq_depth || f.window != f0.window || f.inline_send != f0.inline_send ||
			   f.verify != f0.verify || f.messages != f0.messages || f.duration_s != f0.duration_s ||
			   f.rate_pps != f0.rate_pps || f.transport != f0.transport) {
			*err = where + "flows that differ from flow '" + f0.name + "' in more than qps" + later;
			return -1;
		}
		qps.push_back(f.qps);
	}
	if (o->interactive) {
		*err = at(c, f0.line, "flows.[0]") + "-i: the console comes with runs in one process in this build (not two processes)";
		return -1;
	}
	if (kind != 0 && f0.messages == 0) {
		*err = at(c, f0.line, "flows.[0]") + "a two-host flow needs messages (it announces its count to the server)";
		return -1;
	}
	const IoContextConf *txio = tx0 ? context_of(c, tx0->lcore) : nullptr;
	const IoContextConf *rxio = rx0 ? context_of(c, rx0->lcore) : nullptr;
	if (txio && rxio && txio->device != rxio->device) {
		*err = at(c, rxio->line, "io_contexts") + "the two ends on different devices" + later;
		return -1;
	}
	const DeviceConf *dev = device_of(c, txio ? txio : rxio);

	RunOptions r = flow_options(c, f0, txio, rxio, *dev, *o);
	for (const FlowConf &f : c.flows)
		r.flow_names.push_back(f.name);
	r.mode = Mode::rate;
	r.rate_pps = f0.rate_pps;   // kept by the gen stage if there is one, else by the requester
	r.flows = qps;
	r.qps = 0;
	for (uint32_t q : qps)
		r.qps += q;
	r.srq_refill = rxio && rxio->srq ? rxio->srq_refill : std::max(f0.batch, f0.window * r.qps / 8);
	r.tx_lcore = tx0 ? static_cast<int>(tx0->lcore) : -1;
	r.rx_lcore = rx0 ? static_cast<int>(rx0->lcore) : -1;
	if (kind == 1) {
		r.peer = f0.peer;
		r.local = f0.local;
	} else if (kind == 2) {
		r.listen = f0.listen;
	}
	if (r.bad_rkey_qp >= static_cast<int>(r.qps)) {
		*err = "--inject-bad-rkey " + std::to_string(r.bad_rkey_qp) + ": the pipeline has only " + std::to_string(r.qps) + " QP(s)";
		return -1;
	}
	*o = r;
	return 0;
}

} // namespace rp
