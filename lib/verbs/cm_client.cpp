/* rdma_cm's client: resolving the server's address and route, then connecting the
 * QPs and reading the server's replies. */
#include "verbs/cm_internal.h"

#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>

namespace rp {

using namespace cm_detail;

int CmClient::resolve(const CmAddr &local, const CmAddr &server, unsigned n, int timeout_ms, std::string *err)
{
	close();
	server_ = server;
	what_ = "rdma_cm: connect to " + server.str;
	if (n == 0 || n > 65536 || timeout_ms <= 0) {
		*err = what_ + ": " + std::to_string(n) + " connections within " + std::to_string(timeout_ms) +
		       " ms: want 1..65536 connections and a positive timeout";
		return -EINVAL;
	}
	int ret = open_channel(err);
	if (ret)
		return ret;
	const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
	conns_.resize(n);
	for (unsigned i = 0; i < n && ret == 0; i++)
		ret = start_resolve(i, local, deadline, err);
	if (ret == 0)
		ret = await_routes(deadline, timeout_ms, err);
	if (ret == 0)
		ret = take_device(err);
	if (ret != 0)
		close();
	return ret;
}

/* Creates connection i's id and starts resolving its address; the route follows
 * from await_routes. */
int CmClient::start_resolve(unsigned i, const CmAddr &local, int64_t deadline_ns, std::string *err)
{
	const bool bind_local = local.sin.sin_addr.s_addr != htonl(INADDR_ANY);
	CmConn &c = conns_[i];
	int ret;
	c.name = "connection " + std::to_string(i);
	/* context = index + 1: events find their connection without a lookup table. */
	if (rdma_create_id(channel_, &c.id, reinterpret_cast<void *>(static_cast<uintptr_t>(i) + 1), RDMA_PS_TCP) != 0) {
		ret = errno;
		c.id = nullptr;
		*err = what_ + ": rdma_create_id: " + strerror(ret);
		return -ret;
	}
	if (tos_ >= 0) {
		uint8_t tos = static_cast<uint8_t>(tos_);
		if (rdma_set_option(c.id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) != 0) {
			ret = errno;
			*err = what_ + ": rdma_set_option TOS " + std::to_string(tos_) + ": " + strerror(ret);
			return -ret;
		}
	}
	c.state = CmState::kResolving;
	sockaddr_in src = local.sin;
	sockaddr_in dst = server_.sin;
	if (rdma_resolve_addr(c.id, bind_local ? reinterpret_cast<sockaddr *>(&src) : nullptr,
			      reinterpret_cast<sockaddr *>(&dst), left_ms(deadline_ns)) != 0) {
		ret = errno;
		if (bind_local && (ret == EADDRNOTAVAIL || ret == ENODEV))
			*err = what_ + ": local address " + local.str + " is not on an RDMA device (rdma_resolve_addr: " +
			       strerror(ret) + ")";
		else
			*err = what_ + ": rdma_resolve_addr from " + (bind_local ? local.str : "any address") + ": " +
			       strerror(ret);
		return -ret;
	}
	return 0;
}

/* Takes each connection from ADDR_RESOLVED through rdma_resolve_route to ROUTE_RESOLVED. */
int CmClient::await_routes(int64_t deadline_ns, int timeout_ms, std::string *err)
{
	const unsigned n = size();
	unsigned routed = 0;
	Event ev;
	int ret;
	while (routed < n) {
		int r = await_event(deadline_ns, timeout_ms, &ev, [&] {
			return "resolving the address and route (" + std::to_string(routed) + " of " + std::to_string(n) + " routed)";
		}, err);
		if (r < 0)
			return r;
		CmConn *c = conn_of(ev.id);
		if (c == nullptr)
			continue;
		switch (ev.type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(c->id, left_ms(deadline_ns)) != 0) {
				ret = errno;
				*err = what_ + ": rdma_resolve_route: " + strerror(ret);
				return -ret;
			}
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			c->state = CmState::kRouted;
			routed++;
			break;
		case RDMA_CM_EVENT_ADDR_ERROR:
			ret = ev.status < 0 ? -ev.status : EHOSTUNREACH;
			if (ret == ENETUNREACH || ret == EHOSTUNREACH)
				*err = what_ + ": no route (" + event_str(ev.type, ev.status) + ")";
			else
				*err = what_ + ": address not resolved (" + event_str(ev.type, ev.status) + ")";
			return -ret;
		case RDMA_CM_EVENT_ROUTE_ERROR:
			ret = ev.status < 0 ? -ev.status : EHOSTUNREACH;
			*err = what_ + ": route not resolved (" + event_str(ev.type, ev.status) + ")";
			return -ret;
		default:
			*err = what_ + ", " + c->name + ": unexpected " + event_str(ev.type, ev.status) +
			       " while resolving";
			return -EPROTO;
		}
	}
	return 0;
}

/* The caller opens one PD and its CQs on one device: every route must lead there. */
int CmClient::take_device(std::string *err)
{
	verbs_ = conns_[0].id->verbs;
	port_num_ = conns_[0].id->port_num;
	for (const CmConn &c : conns_) {
		if (c.id->verbs != verbs_) {
			*err = what_ + ": the connections resolved to different devices (" + dev_name(verbs_) + " and " +
			       dev_name(c.id->verbs) + ")";
			return -EXDEV;
		}
	}
	return 0;
}

namespace {

std::string reject_cause(const uint8_t *priv, size_t len, int status, uint16_t port)
{
	std::string reason;
	if (status == 8)   // the CM at the address has no listener on the port
		return "no server listening on port " + std::to_string(port) + " (" +
		       event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
	if (cm_reject_decode(priv, len, &reason))
		return "rejected by the peer: " + reason + " (" + event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
	/* No reason of ours: a peer that is not rdmapipe, or a server process that went
	 * away (the kernel refuses what it left pending). */
	return "rejected by the peer without a reason (" + event_str(RDMA_CM_EVENT_REJECTED, status) + ")";
}

} // namespace

int CmClient::connect(std::span<const CmQpSpec> specs, std::span<const CmPrivate> locals, int timeout_ms,
		      std::string *err)
{
	const unsigned n = size();
	int ret = 0;
	if (n == 0 || conns_[0].state != CmState::kRouted) {
		*err = (what_.empty() ? std::string("rdma_cm: connect") : what_) + ": resolve() first";
		return -EINVAL;
	}
	if (specs.size() != n || locals.size() != n || timeout_ms <= 0) {
		*err = what_ + ": " + std::to_string(specs.size()) + " QP specs and " + std::to_string(locals.size()) +
		       " private data for " + std::to_string(n) + " connections, timeout " + std::to_string(timeout_ms) +
		       " ms";
		close();
		return -EINVAL;
	}
	const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
	for (unsigned i = 0; i < n && ret == 0; i++)
		ret = start_connect(i, specs[i], locals[i], err);
	if (ret == 0)
		ret = await_established(deadline, timeout_ms, err);
	if (ret != 0)
		close();
	return ret;
}

/* Creates connection i's QP and sends its REQ with our private data. */
int CmClient::start_connect(unsigned i, const CmQpSpec &spec, const CmPrivate &local, std::string *err)
{
	CmConn &c = conns_[i];
	c.local = local;
	c.name = "connection " + std::to_string(i) + " (flow " + std::to_string(c.local.flow) + " QP " +
		 std::to_string(c.local.qp_index) + ")";
	int ret = create_qp(c, spec, err);
	if (ret)
		return ret;
	uint8_t priv[kCmParamsBytes];
	cm_private_encode(c.local, priv);
	rdma_conn_param p{};
	p.private_data = priv;
	p.private_data_len = sizeof(priv);
	/* RDMA_MAX_*: librdmacm takes the device's limits. */
	p.responder_resources = (c.access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) ? RDMA_MAX_RESP_RES : 0;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	p.retry_count = spec.qp.retry_cnt > 7 ? 7 : spec.qp.retry_cnt;
	p.rnr_retry_count = spec.qp.rnr_retry > 7 ? 7 : spec.qp.rnr_retry;
	p.qp_num = c.qp->qp_num;   // ours: the reply comes back as CONNECT_RESPONSE
	p.srq = c.qp->srq != nullptr;
	if (rdma_connect(c.id, &p) != 0) {
		ret = errno;
		*err = conn_what(c) + ": rdma_connect: " + strerror(ret);
		return -ret;
	}
	c.state = CmState::kConnecting;
	return 0;
}

int CmClient::await_established(int64_t deadline_ns, int timeout_ms, std::string *err)
{
	const unsigned n = size();
	unsigned established = 0;
	Event ev;
	while (established < n) {
		int r = await_event(deadline_ns, timeout_ms, &ev, [&] {
			return "waiting for ESTABLISHED (" + std::to_string(established) + " of " + std::to_string(n) +
			       " established)";
		}, err);
		if (r < 0)
			return r;
		CmConn *c = conn_of(ev.id);
		if (c == nullptr || ev.type == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			continue;
		if ((r = on_connect_event(ev, *c, err)) != 0)
			return r;
		established++;
	}
	return 0;
}

/* ESTABLISHED with a valid reply: 0. Anything else fails the whole set: -errno. */
int CmClient::on_connect_event(const Event &ev, CmConn &c, std::string *err)
{
	std::string why;
	switch (ev.type) {
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* The server's REP: a bad reply is dropped by disconnecting; else our QP to
		 * RTR and RTS, and the RTU that establishes the connection. */
		if (cm_private_decode(ev.priv, ev.priv_len, &c.peer, &why) != 0) {
			*err = conn_what(c) + ": the server's reply is invalid: " + why;
			return -EPROTO;
		}
		if (int ret = ready_qp(c, err); ret != 0)
			return ret;
		if (rdma_establish(c.id) != 0) {
			int ret = errno;
			*err = conn_what(c) + ": rdma_establish: " + strerror(ret);
			return -ret;
		}
		c.state = CmState::kEstablished;
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		*err = conn_what(c) + ": " + reject_cause(ev.priv, ev.priv_len, ev.status, ntohs(server_.sin.sin_port));
		c.state = CmState::kDown;
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		*err = conn_what(c) + ": no answer from the server (" + event_str(ev.type, ev.status) + ")";
		c.state = CmState::kDown;
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		/* Status -1: librdmacm got the reply but could not take the QP to
		 * RTR/RTS or send the RTU, typically because the server went away. */
		*err = conn_what(c) + ": the handshake failed" +
		       (ev.status == -1 ? " after the server's reply (did the server go away?)" : "") + " (" +
		       event_str(ev.type, ev.status) + ")";
		c.state = CmState::kDown;
		return -ECONNABORTED;
	case RDMA_CM_EVENT_DISCONNECTED:
		*err = conn_what(c) + ": disconnected by the peer before all " + std::to_string(size()) +
		       " connections were established (" + event_str(ev.type, ev.status) + ")";
		return -ECONNRESET;
	default:
		*err = conn_what(c) + ": " + event_str(ev.type, ev.status) + " while connecting";
		c.state = CmState::kDown;
		return ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ? -ENODEV : -EPROTO;
	}
}

} // namespace rp
