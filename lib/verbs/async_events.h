/* Async events (QP fatal, SRQ limit reached, port state, ...) are read off the data
 * path by a DPDK control thread that sleeps in poll() on the device's async fd; the
 * lcores never see them. Counts and the first few events are kept for the summary. */
#pragma once

#include <infiniband/verbs.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace rp {

inline constexpr unsigned kAsyncEventTypes = IBV_EVENT_WQ_FATAL + 1;
inline constexpr unsigned kAsyncEventsKept = 8;

struct AsyncEventWatch {
	ibv_context *ctx = nullptr;
	pthread_t thread{};
	bool running = false;
	std::atomic<bool> stop{false};                     // main: wo, watcher: ro
	std::atomic<uint64_t> counts[kAsyncEventTypes]{};  // watcher: wo, main: ro
	std::atomic<uint32_t> kept{0};
	char lines[kAsyncEventsKept][96] = {};             // watcher writes line i before kept = i + 1
};

/* Starts the watcher thread. Returns 0 or -errno with *err. */
int async_watch_start(AsyncEventWatch *w, ibv_context *ctx, std::string *err);
/* Stops and joins it (idempotent). */
void async_watch_stop(AsyncEventWatch *w);

} // namespace rp
