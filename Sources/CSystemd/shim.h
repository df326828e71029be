#ifndef SCENESYNC_CSYSTEMD_SHIM_H
#define SCENESYNC_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
