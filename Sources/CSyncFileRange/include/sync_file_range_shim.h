#ifndef SCENESYNC_SYNC_FILE_RANGE_SHIM_H
#define SCENESYNC_SYNC_FILE_RANGE_SHIM_H

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts the writeback of `count` bytes at `offset` of `fd` and
/// returns without waiting for it. Swift's Glibc module declares neither the call nor its flags (glibc declares them
/// only under _GNU_SOURCE). 0, or -1 with errno set (ENOSYS where the system has no such call).
int scenesync_start_writeback(int fd, long long offset, long long count);

#endif
