/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FUSE low-level operations, each called under the engine lock
 * (fuse.c): the reads (fuse_read.c), the xattrs (fuse_xattr.c) and the
 * writes of a read-write mount (fuse_write.c). Parameters as libfuse's
 * struct fuse_lowlevel_ops has them.
 */
#ifndef BCH_MOUNT_FUSE_OPS_H
#define BCH_MOUNT_FUSE_OPS_H

#include "mount/fuse_state.h"

/* fuse_read.c */
void bf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void bf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void bf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void bf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void bf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void bf_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void bf_readlink(fuse_req_t req, fuse_ino_t ino);
void bf_statfs(fuse_req_t req, fuse_ino_t ino);

/* fuse_xattr.c */
void bf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void bf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void bf_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		 size_t size, int flags);
void bf_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* fuse_write.c (read-write only) */
void bf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void bf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void bf_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void bf_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void bf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void bf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void bf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void bf_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags);
void bf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi);
void bf_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi);
void bf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void bf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void bf_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		  struct fuse_file_info *fi);
void bf_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi);
void bf_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void bf_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
