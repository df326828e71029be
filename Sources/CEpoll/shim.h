#ifndef SCENESYNC_CEPOLL_SHIM_H
#define SCENESYNC_CEPOLL_SHIM_H
// epoll for scenesync-bench's subscriber threads: Swift's Glibc module does not export <sys/epoll.h>.
#include <sys/epoll.h>
#endif
