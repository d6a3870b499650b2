/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Data jobs (doc/ioctl.md §9 DATA, doc/ioctl.md §7, doc/engine.md §17): rereplicate, migrate,
 * scrub, each an engine thread that moves one extent per transaction and
 * publishes progress records through its job descriptor.
 */
#ifndef BCH_DATA_JOB_H
#define BCH_DATA_JOB_H

#include <stdbool.h>

#include "format/ioctl.h"

struct bch_admin;
struct printbuf;

/* Start job @arg (the seed's 56-byte struct; the 112-byte one shares it): *@fd its descriptor. */
int bch_fs_data(struct bch_admin *a, const struct bch_ioctl_data *arg, int *fd,
		struct printbuf *msg);
/* Ask every job to stop (each ends after its current extent). */
void bch_jobs_stop_all(struct bch_admin *a);
/*
 * Repair on read (core/integrity.h): the extents over @r, a copy of which
 * failed while the mount read them, checked and repaired as scrub does
 * (each bad copy written anew from a good one, one transaction per
 * extent). Caller holds the engine lock. The copies rewritten (counted in
 * c->integ), or an error; a line per extent in @log.
 */
struct bch_fs;
struct bch_repair_req;
int bch_data_repair(struct bch_fs *c, const struct bch_repair_req *r, struct printbuf *log);

/* Free the jobs that ended (@wait: wait for all of them first). */
void bch_jobs_reap(struct bch_admin *a, bool wait);

#endif
