#include "engine/ctrl_port.h"

#include "engine/requester.h"
#include "engine/responder.h"
#include "verbs/ctrl_qp.h"

namespace rp {

namespace {

/* The role among `roles` whose table holds qpn, and its index there (false: none). */
template <typename Role>
bool find_qp(Role *const *roles, uint32_t n, uint32_t qpn, Role **role, uint32_t *qi)
{
	for (uint32_t o = 0; o < n; o++)
		if ((*qi = roles[o]->table.find(qpn)) != QpTable::kNone) {
			*role = roles[o];
			return true;
		}
	return false;
}

/* One burst of the control QP, each message handed on. Returns messages seen, or -1. */
int ctrl_port_burst(CtrlPort *port, uint64_t now)
{
	const void *msg[kCtrlRecvBurst];
	uint32_t len[kCtrlRecvBurst];
	int n = ctrl_recv(port->ctrl, msg, len, kCtrlRecvBurst);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		AckMsg a;
		uint32_t qi = 0;
		Requester *q = nullptr;
		Responder *v = nullptr;
		const bool valid = ack_valid(msg[i], len[i], &a);
		if (valid && (a.flags & kCtrlRestartRequest) && find_qp(port->receivers, port->nreceivers, a.qpn, &v, &qi))
			responder_on_restart_request(v, qi, a.epoch, now);
		else if (valid && !(a.flags & kCtrlRestartRequest) && find_qp(port->senders, port->nsenders, a.qpn, &q, &qi))
			requester_on_ack(q, qi, a, now);
		else
			port->unknown++;
	}
	return ctrl_recv_done(port->ctrl) < 0 ? -1 : n;
}

} // namespace

int ctrl_port_poll(CtrlPort *port, uint64_t now)
{
	int seen = 0;
	for (uint32_t round = 0; round < kCtrlPollRounds; round++) {
		int n = ctrl_port_burst(port, now);
		if (n < 0)
			return -1;
		seen += n;
		if (n < static_cast<int>(kCtrlRecvBurst))
			break;
	}
	return seen;
}

} // namespace rp
