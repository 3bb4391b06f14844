/* rdmapipe's log types, registered with rte_log the DPDK way (RTE_LOG_REGISTER), one per
 * layer, so EAL's --log-level picks them out: --log-level=rdmapipe.engine:debug,
 * --log-level='rdmapipe.*:warning'. Setup and teardown only: the fast path logs nothing,
 * it counts. Before EAL starts, rte_log writes to stderr, so a setup error is printed
 * plainly either way.
 *
 *   RP_LOG(ERR, APP, "rdmapipe: %s\n", err.c_str());
 */
#pragma once

#include <rte_log.h>

extern int rp_logtype_conf;
extern int rp_logtype_verbs;
extern int rp_logtype_engine;
extern int rp_logtype_pipeline;
extern int rp_logtype_control;
extern int rp_logtype_app;

/* level: EMERG .. DEBUG (RTE_LOG_<level>); layer: CONF, VERBS, ENGINE, PIPELINE,
 * CONTROL, APP. The format carries its own "rdmapipe: " prefix and newline, so a
 * message reads the same whatever the log stream. */
#define RP_LOG(level, layer, ...) rte_log(RTE_LOG_##level, RP_LOGTYPE_##layer, __VA_ARGS__)
#define RP_LOGTYPE_CONF rp_logtype_conf
#define RP_LOGTYPE_VERBS rp_logtype_verbs
#define RP_LOGTYPE_ENGINE rp_logtype_engine
#define RP_LOGTYPE_PIPELINE rp_logtype_pipeline
#define RP_LOGTYPE_CONTROL rp_logtype_control
#define RP_LOGTYPE_APP rp_logtype_app

namespace rp {

/* Whether a message of this level on this layer would be written: for building a
 * costly debug line only when someone asked for it. */
inline bool log_enabled(uint32_t level, int type)
{
	return rte_log_can_log(type, level);
}

} // namespace rp
