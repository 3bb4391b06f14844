/* rdma_cm's server: listening, screening connection requests, accepting the chosen
 * ones and waiting until they are established. */
#include "verbs/cm_internal.h"

#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>

namespace rp {

using namespace cm_detail;

int CmServer::listen(const CmAddr &addr, int backlog, std::string *err)
{
	close();
	addr_ = addr;
	rejected_ = 0;
	last_reject_.clear();
	what_ = "rdma_cm: listen on " + addr.str;
	int ret = open_channel(err);
	if (ret)
		return ret;
	sockaddr_in sin = addr.sin;
	if (rdma_create_id(channel_, &listen_id_, nullptr, RDMA_PS_TCP) != 0) {
		ret = errno;
		listen_id_ = nullptr;
		*err = what_ + ": rdma_create_id: " + strerror(ret);
		goto fail;
	}
	if (rdma_bind_addr(listen_id_, reinterpret_cast<sockaddr *>(&sin)) != 0) {
		ret = errno;
		if (ret == EADDRINUSE)
			*err = what_ + ": the port is in use (rdma_bind_addr: " + strerror(ret) + ")";
		else if (ret == EADDRNOTAVAIL || ret == ENODEV)
			*err = what_ + ": the address is not on an RDMA device (rdma_bind_addr: " + strerror(ret) + ")";
		else
			*err = what_ + ": rdma_bind_addr: " + strerror(ret);
		goto fail;
	}
	if (rdma_listen(listen_id_, backlog) != 0) {
		ret = errno;
		*err = what_ + ": rdma_listen: " + strerror(ret);
		goto fail;
	}
	verbs_ = listen_id_->verbs;
	port_num_ = listen_id_->port_num;
	bound_port_ = ntohs(rdma_get_src_port(listen_id_));
	return 0;

fail:
	close();
	return -ret;
}

int CmServer::reject_request(rdma_cm_id *id, const std::string &who, const std::string &reason)
{
	uint8_t rej[kCmRejectBytes];
	cm_reject_encode(reason, rej);
	int ret = rdma_reject(id, rej, sizeof(rej)) ? -errno : 0;
	rdma_destroy_id(id);
	rejected_++;
	last_reject_ = who + ": " + reason;
	return ret;
}

void CmServer::drop(size_t i, const std::string &why)
{
	CmConn &c = conns_[i];
	if (c.qp)
		ibv_destroy_qp(c.qp);
	rdma_destroy_id(c.id);
	rejected_++;
	last_reject_ = c.name + ": " + why;
	conns_.erase(conns_.begin() + static_cast<std::ptrdiff_t>(i));
	for (size_t k = i; k < conns_.size(); k++)   // conn_of finds a connection by its place
		conns_[k].id->context = reinterpret_cast<void *>(static_cast<uintptr_t>(k + 1));
}

int CmServer::accept(unsigned n, int timeout_ms, const CmChooseFn &choose, std::string *err)
{
	int ret = 0;
	unsigned established = 0;
	Event ev;
	if (listen_id_ == nullptr) {
		*err = (what_.empty() ? std::string("rdma_cm: accept") : what_) + ": listen() first";
		return -EINVAL;
	}
	if (n == 0 || n > 65536 || timeout_ms <= 0) {
		*err = what_ + ": accept " + std::to_string(n) + " connections within " + std::to_string(timeout_ms) +
		       " ms: want 1..65536 connections and a positive timeout";
		close();
		return -EINVAL;
	}
	conns_.reserve(n);   // emplace_back never moves a connection under a reference
	const int64_t deadline = now_ns() + static_cast<int64_t>(timeout_ms) * 1000000;
	while (established < n && ret == 0) {
		ret = await_event(deadline, timeout_ms, &ev, [&] { return waiting_for(n, established); }, err);
		if (ret < 0)
			break;
		if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST && ev.listen_id == listen_id_)
			ret = on_request(ev, n, choose, err);
		else
			ret = on_conn_event(ev, &established, err);
	}
	if (ret != 0) {
		close();
		return ret;
	}
	/* One-shot: later clients get the CM's "no listener" reject, not a silent wait. */
	rdma_destroy_id(listen_id_);
	listen_id_ = nullptr;
	return 0;
}

std::string CmServer::waiting_for(unsigned n, unsigned established) const
{
	std::string w = "waiting for " + std::to_string(n) + (n > 1 ? " connections (" : " connection (") +
			std::to_string(conns_.size()) + " accepted, " + std::to_string(established) + " established";
	if (rejected_)
		w += "; rejected " + std::to_string(rejected_) + " request" + (rejected_ > 1 ? "s" : "") +
		     ", the last: " + last_reject_;
	return w + ")";
}

/* A new id, ours from now on: accepted into conns_, or rejected and destroyed. */
int CmServer::on_request(const Event &ev, unsigned n, const CmChooseFn &choose, std::string *err)
{
	rdma_cm_id *id = ev.id;
	std::string who = "connection from " + sockaddr_str(rdma_get_peer_addr(id));
	CmPrivate peer;
	std::string why;
	if (cm_private_decode(ev.priv, ev.priv_len, &peer, &why) != 0) {
		reject_request(id, who, "bad private data: " + why);
		return 0;
	}
	who += " (flow " + std::to_string(peer.flow) + " QP " + std::to_string(peer.qp_index) + ")";
	if (!make_room(id, who, peer, n))
		return 0;
	CmQpSpec spec;
	CmPrivate reply;
	CmRequest req{peer, who, id->verbs, static_cast<unsigned>(conns_.size())};
	int verdict = choose(req, &spec, &reply, &why);
	if (verdict == kCmReject) {
		reject_request(id, who, why);
		return 0;
	}
	if (verdict != kCmAccept) {
		reject_request(id, who, "server setup failed");
		*err = what_ + ", " + who + ": " + why;
		return verdict < 0 ? verdict : -EINVAL;
	}
	return accept_request(id, who, peer, spec, reply, err);
}

/* The same QP again: refused if connected; if still in its handshake, the client gave
 * up on it and asked again (it does while no server listens): the new request
 * replaces it. False when the request was refused (so is one past n). */
bool CmServer::make_room(rdma_cm_id *id, const std::string &who, const CmPrivate &peer, unsigned n)
{
	size_t same = conns_.size();
	for (size_t k = 0; k < conns_.size(); k++)
		if (conns_[k].peer.flow == peer.flow && conns_[k].peer.qp_index == peer.qp_index)
			same = k;
	if (same < conns_.size() && conns_[same].state == CmState::kEstablished) {
		reject_request(id, who, "flow " + std::to_string(peer.flow) + " QP " + std::to_string(peer.qp_index) +
						  " is already connected");
		return false;
	}
	if (same < conns_.size())
		drop(same, "replaced by the client's new request");
	if (conns_.size() >= n) {
		reject_request(id, who, "server full (" + std::to_string(n) + " connections)");
		return false;
	}
	return true;
}

/* Takes the request into conns_, makes its QP and sends our REP with `reply`. */
int CmServer::accept_request(rdma_cm_id *id, const std::string &who, const CmPrivate &peer, const CmQpSpec &spec,
			     const CmPrivate &reply, std::string *err)
{
	conns_.emplace_back();
	CmConn &c = conns_.back();
	c.id = id;
	c.id->context = reinterpret_cast<void *>(static_cast<uintptr_t>(conns_.size()));
	c.name = who;
	c.peer = peer;
	c.local = reply;
	c.state = CmState::kConnecting;   // from here close() disconnects it
	/* A request whose QP rdma_cm refuses (EINVAL) is refused, not the server: seen for
	 * a stale request of a client that had already given up on it and asked again.
	 * Other failures are the server's. */
	std::string why;
	int ret = create_qp(c, spec, &why);
	if (ret == -EINVAL) {
		if (c.qp)
			ibv_destroy_qp(c.qp);
		conns_.pop_back();
		reject_request(id, who, why);
		return 0;
	}
	if (ret == 0)
		ret = ready_qp(c, &why);
	if (ret != 0) {
		*err = why;
		return ret;
	}
	uint8_t priv[kCmParamsBytes];
	cm_private_encode(reply, priv);
	rdma_conn_param p{};
	p.private_data = priv;
	p.private_data_len = sizeof(priv);
	/* RDMA_MAX_*: the lesser of the client's request and our device's limits. */
	p.responder_resources = (c.access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) ? RDMA_MAX_RESP_RES : 0;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	p.rnr_retry_count = spec.qp.rnr_retry > 7 ? 7 : spec.qp.rnr_retry;
	p.qp_num = c.qp->qp_num;   // in RTS already (ready_qp): librdmacm leaves it be
	p.srq = c.qp->srq != nullptr;
	if (rdma_accept(c.id, &p) != 0) {
		ret = errno;
		*err = conn_what(c) + ": rdma_accept: " + strerror(ret);
		return -ret;
	}
	return 0;
}

/* An event of an accepted connection or of the listener: 0 to wait on, -errno to fail. */
int CmServer::on_conn_event(const Event &ev, unsigned *established, std::string *err)
{
	CmConn *c = conn_of(ev.id);
	if (ev.type == RDMA_CM_EVENT_TIMEWAIT_EXIT)
		return 0;
	if (c == nullptr) {
		if (ev.id == listen_id_ && ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			*err = what_ + ": device removed (" + event_str(ev.type, ev.status) + ")";
			return -ENODEV;
		}
		return 0;
	}
	switch (ev.type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->state == CmState::kConnecting) {
			c->state = CmState::kEstablished;
			(*established)++;
		}
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		*err = conn_what(*c) + ": disconnected by the peer during setup (" + event_str(ev.type, ev.status) + ")";
		return -ECONNRESET;
	default:
		/* REJECTED / CONNECT_ERROR / UNREACHABLE: the client went away mid-handshake.
		 * Before it was established, that client may ask again (it had asked before
		 * this server listened): wait on, until the deadline. */
		if (c->state == CmState::kConnecting && ev.type != RDMA_CM_EVENT_DEVICE_REMOVAL) {
			drop(static_cast<size_t>(c - conns_.data()), "the handshake failed (" + event_str(ev.type, ev.status) + ")");
			return 0;
		}
		*err = conn_what(*c) + ": the handshake failed (" + event_str(ev.type, ev.status) + ")";
		c->state = CmState::kDown;
		return ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ? -ENODEV : -ECONNABORTED;
	}
}

} // namespace rp
