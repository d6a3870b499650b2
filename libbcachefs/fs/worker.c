// SPDX-License-Identifier: GPL-2.0
/* The background threads of the mount (worker.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btree/btree_update.h"
#include "core/bch_fs.h"
#include "fs/worker.h"

bool bch_worker_start(struct bch_worker *w, struct bch_fs *c, const char *env, bool *running,
		      void *(*fn)(void *), void *arg,
		      void (*log)(void *arg, const char *msg), void *log_arg)
{
	const char *e = getenv(env);
	sigset_t all, old;
	int r;

	memset(w, 0, sizeof(*w));
	if (e && !strcmp(e, "0"))
		return false;
	w->c = c;
	w->running = running;
	w->log = log;
	w->log_arg = log_arg;
	atomic_init(&w->stop, false);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	/* the thread takes no signal: they are the mount's main loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&w->thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		return false;
	}
	bch_fs_lock(c);
	*running = true;
	bch_fs_unlock(c);
	return true;
}

void bch_worker_stop(struct bch_worker *w)
{
	pthread_mutex_lock(&w->lock);
	atomic_store(&w->stop, true);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	bch_fs_lock(w->c);
	*w->running = false;
	bch_fs_unlock(w->c);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
}

void bch_worker_wait(struct bch_worker *w, unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->lock);
	if (!atomic_load(&w->stop))
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	pthread_mutex_unlock(&w->lock);
}
