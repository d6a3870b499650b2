/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A background thread of the mount (copygc.c, rebalance.c): started once
 * the filesystem is read-write, woken or stopped at unmount, with an
 * optional log of what it did.
 *
 *	struct bch_worker w;
 *	if (bch_worker_start(&w, c, "BCH_COPYGC", &c->copygc.thread, fn, arg, log, log_arg))
 *		...	// fn(arg) runs until bch_worker_stopping(&w)
 *	bch_worker_stop(&w);
 */
#ifndef BCH_WORKER_H
#define BCH_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct bch_fs;

struct bch_worker {
	struct bch_fs	*c;
	pthread_t	thread;
	pthread_mutex_t	lock;
	pthread_cond_t	cond;
	atomic_bool	stop;
	bool		*running;	/* the filesystem's flag: set while the thread exists */
	void		(*log)(void *arg, const char *msg);
	void		*log_arg;
};

/*
 * Start @fn(@arg) on a thread, unless the environment variable @env is
 * "0" (tests). *@running is set under the filesystem's lock. False: not
 * started.
 */
bool bch_worker_start(struct bch_worker *w, struct bch_fs *c, const char *env, bool *running,
		      void *(*fn)(void *), void *arg,
		      void (*log)(void *arg, const char *msg), void *log_arg);
/* Ask the thread to stop, wait for it, clear *running. */
void bch_worker_stop(struct bch_worker *w);
/* Sleep @ms milliseconds, or until asked to stop. */
void bch_worker_wait(struct bch_worker *w, unsigned ms);

static inline bool bch_worker_stopping(struct bch_worker *w)
{
	return atomic_load(&w->stop);
}

#endif
