#ifndef SCENESYNC_RENAMEAT2_SHIM_H
#define SCENESYNC_RENAMEAT2_SHIM_H

/// renameat2(2)'s flags, as <linux/fs.h> defines them: Swift's Glibc module declares neither the flags nor the call
/// (glibc declares them only under _GNU_SOURCE).
#define SCENESYNC_RENAME_NOREPLACE 1u
#define SCENESYNC_RENAME_EXCHANGE 2u

/// renameat2(2) relative to the working directory: 0, or -1 with errno set (ENOSYS where the kernel or the build
/// has no such call, so that callers fall back as they do for EINVAL).
int scenesync_rename2(const char *from, const char *to, unsigned int flags);

#endif
