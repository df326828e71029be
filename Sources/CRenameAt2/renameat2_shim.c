#define _GNU_SOURCE
#include "renameat2_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

// The system call rather than the C library's wrapper: glibc has the wrapper only since 2.28, the kernel the call
// since Linux 3.15; calling it directly builds with any C library and leaves the fallback to the caller.
int scenesync_rename2(const char *from, const char *to, unsigned int flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}
