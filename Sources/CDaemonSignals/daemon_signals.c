// Blocks the daemon's signals before any other code of the process runs.
//
// Every thread inherits the signal mask of the thread that created it, and the libraries a Swift program loads
// (the runtime, Foundation, ICU) run their initializers, and may start threads, before `main`. Blocking in `main` is
// therefore too late: a signal in the first milliseconds would kill the process by its default action (SIGUSR1,
// SIGHUP and SIGTERM all terminate). The executable's `.preinit_array` runs on the main thread right after the
// dynamic loader has mapped and relocated the libraries and before any of their initializers, so every thread the
// process ever starts blocks these signals, and they stay pending until the daemon's signal thread takes them
// (SPEC §7). Only the loader's own work before it (about a millisecond) is out of any program's reach; a parent
// that starts the daemon with these signals blocked (the mask survives execve) closes even that.
#include "daemon_signals.h"

#include <pthread.h>

static int blocked_at_start = 0;

void scenesync_daemon_signal_set(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

static void scenesync_block_daemon_signals(void) {
    sigset_t set;
    scenesync_daemon_signal_set(&set);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) == 0) blocked_at_start = 1;
}

// Only an executable may have a .preinit_array; this target is linked into `scenesyncd` alone.
__attribute__((section(".preinit_array"), used)) static void (*const scenesync_preinit)(void) =
    scenesync_block_daemon_signals;

int scenesync_daemon_signals_blocked_at_start(void) { return blocked_at_start; }
