/* rdma_cm internals shared by cm.cpp, cm_private.cpp, cm_client.cpp and cm_server.cpp:
 * message helpers, the deadline clock, the copied event and the bounded wait. Not part
 * of the API; include verbs/cm.h elsewhere. */
#pragma once

#include "verbs/cm.h"

#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace rp {

namespace cm_detail {

std::string hex(uint64_t v);
/* "2 s", "1.5 s", "300 ms": a timeout as the messages say it. */
std::string ms_str(int ms);
int64_t now_ns();
/* Kernel calls take an int timeout: what is left of the deadline, at least 1 ms. */
int left_ms(int64_t deadline_ns);
const char *dev_name(const ibv_context *c);
/* "10.2.0.1:40123" ("?" for anything but IPv4). */
std::string sockaddr_str(const sockaddr *sa);
/* "RDMA_CM_EVENT_X" plus what its status means. */
std::string event_str(rdma_cm_event_type type, int status);

} // namespace cm_detail

/* An event copied out of librdmacm's, which is acked at once: rdma_destroy_id waits
 * for every event of its id to be acked, so none is ever held. */
struct CmConnSet::Event {
	rdma_cm_event_type type;
	int status;
	rdma_cm_id *id;
	rdma_cm_id *listen_id;
	uint8_t priv[256];   // private_data_len is a uint8_t
	size_t priv_len;
};

template <typename Waiting>
int CmConnSet::await_event(int64_t deadline_ns, int timeout_ms, Event *ev, Waiting waiting, std::string *err)
{
	int r = next_event(deadline_ns, ev, err);
	if (r == 0) {
		*err = what_ + ": timed out after " + cm_detail::ms_str(timeout_ms) + " " + waiting();
		return -ETIMEDOUT;
	}
	return r;
}

} // namespace rp
