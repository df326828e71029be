#define _GNU_SOURCE
#include "sync_file_range_shim.h"

#include <errno.h>
#include <fcntl.h>

// The C library's wrapper: it knows which of the architecture's system calls (sync_file_range, or
// sync_file_range2 where the argument order had to change) to make.
int scenesync_start_writeback(int fd, long long offset, long long count) {
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(fd, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    (void)offset;
    (void)count;
    errno = ENOSYS;
    return -1;
#endif
}
