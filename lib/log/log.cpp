#include "log/log.h"

/* Each a constructor (RTE_INIT) that registers the name and picks up a level EAL's
 * --log-level already set; types registered before EAL parses its arguments take the
 * level then. Information and above is shown by default (what the capability probe
 * found, how messages are cut); --log-level='rdmapipe.*:notice' leaves it out. */
RTE_LOG_REGISTER(rp_logtype_conf, rdmapipe.conf, INFO);
RTE_LOG_REGISTER(rp_logtype_verbs, rdmapipe.verbs, INFO);
RTE_LOG_REGISTER(rp_logtype_engine, rdmapipe.engine, INFO);
RTE_LOG_REGISTER(rp_logtype_pipeline, rdmapipe.pipeline, INFO);
RTE_LOG_REGISTER(rp_logtype_control, rdmapipe.control, INFO);
RTE_LOG_REGISTER(rp_logtype_app, rdmapipe.app, INFO);
