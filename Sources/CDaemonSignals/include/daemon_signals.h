#ifndef SCENESYNC_DAEMON_SIGNALS_H
#define SCENESYNC_DAEMON_SIGNALS_H

#include <signal.h>

/// The signals scenesyncd handles itself (SIGUSR1, SIGHUP, SIGTERM, SIGINT): blocked in every thread from the
/// process's first instruction of its own code, and received with sigwaitinfo(2) by one thread.
void scenesync_daemon_signal_set(sigset_t *set);

/// Whether the constructor below ran (the executable linked this target), so that the daemon can say so.
int scenesync_daemon_signals_blocked_at_start(void);

#endif
