#include "pipeline.h"

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

} // namespace

int pipeline_to_options(const PipelineConf &c, RunOptions *o, std::string *err)
{
	const char *later = " does not run yet in this build (--check validates it; runnable: loopback flows with "
			    "rdma_tx and rdma_rx or echo stages)";
	/* Stages after rdma_rx that run: rdma_rx -> ring -> verify [-> ring -> sink], on the
	 * rdma_rx stage's lcore, for one flow. */
	const StageConf *rx_st = nullptr, *verify_st = nullptr, *sink_st = nullptr;
	for (const StageConf &st : c.stages)
		if (st.kind == StageKind::rdma_rx && st.outputs.size() == 1)
			rx_st = &st;
	for (const StageConf &st : c.stages) {
		if (rx_st && st.kind == StageKind::verify && st.inputs.size() == 1 && st.inputs[0] == rx_st->outputs[0] &&
		    st.lcore == rx_st->lcore)
			verify_st = &st;
	}
	for (const StageConf &st : c.stages) {
		if (verify_st && st.kind == StageKind::sink && verify_st->outputs.size() == 1 &&
		    st.inputs[0] == verify_st->outputs[0] && st.lcore == verify_st->lcore)
			sink_st = &st;
	}
	/* ... and before rdma_tx: gen -> ring -> rdma_tx, on the rdma_tx stage's lcore. */
	const StageConf *gen_st = nullptr, *tx_st = nullptr;
	for (const StageConf &st : c.stages)
		if (st.kind == StageKind::rdma_tx && st.inputs.size() == 1)
			tx_st = &st;
	for (const StageConf &st : c.stages)
		if (tx_st && st.kind == StageKind::gen && st.outputs[0] == tx_st->inputs[0] && st.lcore == tx_st->lcore &&
		    st.flow == tx_st->flow)
			gen_st = &st;
	for (size_t i = 0; i < c.stages.size(); i++) {
		const StageConf &st = c.stages[i];
		std::string where = at(c, st.line, "stages.[" + std::to_string(i) + "]");
		if (&st == verify_st || &st == sink_st || &st == gen_st)
			continue;
		if (&st == tx_st && gen_st == nullptr) {
			*err = where + "an rdma_tx stage fed by a ring that no gen stage of its flow on its lcore fills" + later;
			return -1;
		}
		if (st.kind != StageKind::rdma_tx && st.kind != StageKind::rdma_rx && st.kind != StageKind::echo) {
			*err = where + "a " + stage_kind_name(st.kind) + " stage" +
			       (st.kind == StageKind::verify || st.kind == StageKind::sink
					? " anywhere but after rdma_rx on its lcore (rdma_rx -> ring -> verify [-> ring -> sink])"
					: "") +
			       later;
			return -1;
		}
		if (st.kind == StageKind::rdma_rx && !st.outputs.empty() && &st != rx_st) {
			*err = where + "an rdma_rx stage with more than one output ring" + later;
			return -1;
		}
		if (&st == rx_st && verify_st == nullptr) {
			*err = where + "an rdma_rx stage whose ring does not lead to a verify stage on its lcore" + later;
			return -1;
		}
	}
	if (verify_st && (c.flows.size() != 1 || verify_st->outputs.size() != (sink_st ? 1u : 0u))) {
		*err = at(c, verify_st->line, "stages") + (c.flows.size() != 1 ? "ring stages for more than one flow"
										: "a verify stage whose ring leads elsewhere than a sink on its lcore") + later;
		return -1;
	}
	const FlowConf &f0 = c.flows[0];
	const StageConf *tx0 = nullptr, *rx0 = nullptr;
	bool echo = false;
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
		if (f.transport != Transport::rc || (f.rate_pps > 0 && gen_st == nullptr) || f.sizes.size() != 1) {
			*err = where + (f.transport != Transport::rc ? "transport uc"
					: f.rate_pps > 0 ? "a rate limit without a gen stage (the gen stage keeps the rate)"
							 : "a list of sizes") + later;
			return -1;
		}
		if (i == 0) {
			tx0 = tx;
			rx0 = rx;
			echo = rx && rx->kind == StageKind::echo;
		} else if (kind_of(f) != kind || (f.peer != f0.peer) || (f.listen != f0.listen)) {
			*err = where + "flows of different kinds or peers in one file" + later;
			return -1;
		} else if ((tx && tx->lcore != tx0->lcore) || (rx && (rx->lcore != rx0->lcore || rx->kind != rx0->kind))) {
			*err = where + "flows on other lcores than flow '" + f0.name + "'" + later;
			return -1;
		} else if (f.verb != f0.verb || f.sizes != f0.sizes || f.batch != f0.batch || f.signal_every != f0.signal_every ||
			   f.sq_depth != f0.sq_depth || f.window != f0.window || f.inline_send != f0.inline_send ||
			   f.verify != f0.verify || f.messages != f0.messages || f.duration_s != f0.duration_s) {
			*err = where + "flows that differ from flow '" + f0.name + "' in more than qps" + later;
			return -1;
		}
		qps.push_back(f.qps);
	}
	if (echo && (c.flows.size() != 1 || f0.qps != 1)) {
		*err = at(c, f0.line, "flows.[0]") + "ping-pong (an echo stage) over more than one QP" + later;
		return -1;
	}
	if (kind != 0 && (!c.run.json.empty() || !c.run.csv.empty() || !o->output_json.empty() || !o->output_csv.empty())) {
		*err = c.file + ": run.output: results files for a two-host flow" + later;
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
	const IoContextConf *io = txio ? txio : rxio;
	const DeviceConf *dev = nullptr;
	for (const DeviceConf &d : c.devices)
		if (d.name == io->device)
			dev = &d;

	RunOptions r;
	r.quiet = o->quiet;
	r.stall_timeout_s = o->stall_timeout_s;
	r.corrupt_msg = o->corrupt_msg;
	r.bad_rkey_qp = o->bad_rkey_qp;
	r.config_file = o->config_file;
	/* Results files: the command line's, else the file's run.output. */
	r.output_json = !o->output_json.empty() ? o->output_json : c.run.json;
	r.output_csv = !o->output_csv.empty() ? o->output_csv : c.run.csv;
	for (const FlowConf &f : c.flows)
		r.flow_names.push_back(f.name);
	r.mode = echo ? Mode::pingpong : Mode::rate;
	r.verb = f0.verb;
	r.flows = qps;
	r.qps = 0;
	for (uint32_t q : qps)
		r.qps += q;
	r.device = dev->name;
	r.port = dev->port;
	r.gid_index = dev->gid_index;
	r.msg_bytes = f0.sizes[0];
	r.batch = f0.batch;
	r.signal_every = f0.signal_every;
	r.sq_depth = f0.sq_depth;
	r.slots = f0.window;
	r.srq_refill = rxio && rxio->srq ? rxio->srq_refill : std::max(f0.batch, f0.window * r.qps / 8);
	r.inline_send = f0.inline_send;
	r.verify = f0.verify;
	r.adaptive_poll = (txio && txio->adaptive_poll) || (rxio && rxio->adaptive_poll);
	r.cq_api = (!txio || txio->cq_api == CqApi::ex) && (!rxio || rxio->cq_api == CqApi::ex) ? CqApi::ex : CqApi::classic;
	r.tx_lcore = tx0 ? static_cast<int>(tx0->lcore) : -1;
	r.rx_lcore = rx0 ? static_cast<int>(rx0->lcore) : -1;
	if (gen_st) {
		if (kind != 0 || echo || c.flows.size() != 1 || f0.messages == 0 || f0.sizes[0] < 8 || f0.verb == Verb::read ||
		    verb_is_atomic(f0.verb)) {
			*err = at(c, gen_st->line, "stages") +
			       "a gen stage feeds one loopback flow of send or write messages of 8 B or more, for a message count";
			return -1;
		}
		r.tx_gen_stage = true;
		r.rate_pps = f0.rate_pps;
		for (const RingConf &ring : c.rings)
			if (ring.name == tx_st->inputs[0])
				r.tx_ring_size = ring.size;
	}
	if (verify_st) {
		if (kind != 0 || !(f0.verb == Verb::send || f0.verb == Verb::send_imm) || f0.sizes[0] < 8) {
			*err = at(c, verify_st->line, "stages") +
			       "a verify stage after rdma_rx checks loopback send or send_imm messages of 8 B or more";
			return -1;
		}
		r.rx_verify_stage = true;
		r.rx_sink_stage = sink_st != nullptr;
		for (const RingConf &ring : c.rings)
			if (ring.name == rx_st->outputs[0])
				r.rx_ring_size = ring.size;
	}
	if (kind == 1) {
		r.peer = f0.peer;
		r.local = f0.local;
	} else if (kind == 2) {
		r.listen = f0.listen;
	}
	if (f0.messages)
		r.messages = f0.messages;
	else if (f0.duration_s > 0)
		r.duration_s = f0.duration_s;
	else if (c.run.duration_s > 0)
		r.duration_s = c.run.duration_s;
	else
		r.messages = echo ? kDefaultPingPongIterations : kDefaultMessages;
	if (echo && r.duration_s > 0) {
		*err = at(c, f0.line, "flows.[0]") + "a ping-pong runs a number of messages, not a duration";
		return -1;
	}
	if (r.bad_rkey_qp >= static_cast<int>(r.qps)) {
		*err = "--inject-bad-rkey " + std::to_string(r.bad_rkey_qp) + ": the pipeline has only " + std::to_string(r.qps) + " QP(s)";
		return -1;
	}
	*o = r;
	return 0;
}

} // namespace rp
