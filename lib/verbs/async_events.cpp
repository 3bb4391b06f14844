#include "verbs/async_events.h"

#include <rte_lcore.h>

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rp {

namespace {

constexpr int kPollMs = 50;   // how late a stop request may be noticed

void keep_line(AsyncEventWatch *w, const ibv_async_event &ev)
{
	uint32_t k = w->kept.load(std::memory_order_relaxed);
	if (k >= kAsyncEventsKept)
		return;
	char *line = w->lines[k];
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		snprintf(line, sizeof(w->lines[0]), "%s on QP %u", ibv_event_type_str(ev.event_type),
			 ev.element.qp->qp_num);
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
		snprintf(line, sizeof(w->lines[0]), "%s on port %d", ibv_event_type_str(ev.event_type),
			 ev.element.port_num);
		break;
	default:
		snprintf(line, sizeof(w->lines[0]), "%s", ibv_event_type_str(ev.event_type));
		break;
	}
	w->kept.store(k + 1, std::memory_order_release);
}

void *watch(void *arg)
{
	auto *w = static_cast<AsyncEventWatch *>(arg);
	while (!w->stop.load(std::memory_order_relaxed)) {
		pollfd p{w->ctx->async_fd, POLLIN, 0};
		if (::poll(&p, 1, kPollMs) <= 0)
			continue;
		ibv_async_event ev;
		if (ibv_get_async_event(w->ctx, &ev) != 0)
			continue;
		unsigned t = ev.event_type < kAsyncEventTypes ? ev.event_type : 0;
		w->counts[t].fetch_add(1, std::memory_order_relaxed);
		keep_line(w, ev);
		const AsyncEventHook *h = w->hook.load(std::memory_order_acquire);
		if (const char *why = async_event_ends_run(ev.event_type); why && h && h->fn)
			h->fn(h->arg, why, ev.event_type == IBV_EVENT_PORT_ERR ? ev.element.port_num : 0);
		ibv_ack_async_event(&ev);
	}
	return nullptr;
}

} // namespace

const char *async_event_ends_run(ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_PORT_ERR:
		return "its port went down (async event: port error)";
	case IBV_EVENT_DEVICE_FATAL:
		return "its device failed (async event: local catastrophic error)";
	default:
		return nullptr;
	}
}

int async_watch_start(AsyncEventWatch *w, ibv_context *ctx, std::string *err)
{
	w->ctx = ctx;
	int flags = fcntl(ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		*err = std::string("async event fd: fcntl: ") + strerror(errno);
		return -errno;
	}
	int ret = rte_ctrl_thread_create(&w->thread, "rp-async", nullptr, watch, w);
	if (ret != 0) {
		*err = std::string("async event thread: ") + strerror(-ret);
		return ret;
	}
	w->running = true;
	return 0;
}

void async_watch_stop(AsyncEventWatch *w)
{
	if (!w->running)
		return;
	w->stop.store(true);
	pthread_join(w->thread, nullptr);
	w->running = false;
}

} // namespace rp
