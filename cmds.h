/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands. Each cmd_*.c defines the function, which answers --help
 * (`bcachefs help CMD` runs it so); bcachefs.c holds the table that names
 * them. Options are declared once in a table (cmd_opts.h). Commands are thin: they
 * parse options, call the core (libbcachefs/) and print.
 */
#ifndef BCH_CMDS_H
#define BCH_CMDS_H

#include <stdbool.h>
#include <stdnoreturn.h>

#define BCH_COMMANDS()							\
	x(format,		"format",		"Format one or more devices with a new filesystem") \
	x(show_super,		"show-super",		"Print the superblock of a device")	\
	x(fsck,			"fsck",			"Check a filesystem, and repair it")	\
	x(list,			"list",			"List the keys of a btree")		\
	x(list_journal,		"list_journal",		"List the entries and keys of the journal") \
	x(dump,			"dump",			"Dump filesystem metadata to qcow2 images") \
	x(migrate,		"migrate",		"Migrate a mounted ext2/3/4 or xfs filesystem to bcachefs in place") \
	x(migrate_superblock,	"migrate-superblock",	"Add the default superblock to a migrated filesystem") \
	x(unlock,		"unlock",		"Put the key of an encrypted filesystem in the keyring") \
	x(set_passphrase,	"set-passphrase",	"Change the passphrase of an encrypted filesystem") \
	x(remove_passphrase,	"remove-passphrase",	"Store the master key unencrypted")	\
	x(mount,		"mount",		"Mount a filesystem with FUSE")		\
	x(extract,		"extract",		"Copy files out of an unmounted filesystem") \
	x(fs_usage,		"fs usage",		"Show space usage of a mounted filesystem") \
	x(device_add,		"device add",		"Add a device to a mounted filesystem")	\
	x(device_remove,	"device remove",	"Remove a device from a mounted filesystem") \
	x(device_online,	"device online",	"Re-attach a member device")		\
	x(device_offline,	"device offline",	"Detach a member device")		\
	x(device_evacuate,	"device evacuate",	"Move all data off a device")		\
	x(device_set_state,	"device set-state",	"Set the state of a member device")	\
	x(device_resize,	"device resize",	"Grow a member device")			\
	x(data_rereplicate,	"data rereplicate",	"Write missing replicas of degraded data") \
	x(data_migrate,		"data migrate",		"Move data to other devices")		\
	x(data_scrub,		"data scrub",		"Verify every checksum, repair from good copies") \
	x(setattr,		"setattr",		"Set per-file options on files and trees") \
	x(quota_report,		"quota report",		"Show quota usage and limits")		\
	x(quota_set,		"quota set",		"Set the quota limits of a user, group or project") \
	x(version,		"version",		"Print the version of this tool")

#define x(fn, name, summary)					\
	int cmd_##fn(int argc, char *argv[]);
BCH_COMMANDS()
#undef x

/* Print the version on stdout and exit 0 (for version, -V/--version). */
noreturn void cmd_print_version(void);
/* The command as called, for messages: "bcachefs fsck", "mkfs.bcachefs". */
extern const char *bch_cmd_name;
/*
 * A usage error: "<command>: <msg>" on stderr (one line), then "Try
 * '<command> --help' for more information.", and exit 16. The same for
 * every command.
 */
noreturn void cmd_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * getopt_long() returned '?' or ':' (@opt; optstrings start with ':' so
 * that getopt prints nothing): the usage error naming the option.
 */
noreturn void cmd_bad_option(const char *usage, int opt, char *argv[]);
struct printbuf;
/*
 * Opening @path (the first device) failed with @ret: say why once, the
 * same for every command: each line of @err (what the open found, device
 * by device) as "<command>: <line>", or, when it says nothing, "<command>:
 * <path>: cannot open: <error>". @tail (may be NULL) ends the last line.
 */
void cmd_open_failed(const char *path, int ret, const struct printbuf *err, const char *tail);

struct bch_fs;
/*
 * After an open that allowed missing members (--degraded): one line per
 * member that is missing, naming it, on stderr. Returns how many.
 */
unsigned cmd_note_missing(struct bch_fs *c);
struct bch_fs_opts;
/*
 * bch_fs_open(@devs, @nr, @opts) failed with @ret: when members are
 * missing and @opts was not degraded, the tail for cmd_open_failed()
 * suggesting --degraded if a degraded open would do; if it would not,
 * @err is replaced by why (what cannot be read) and NULL returned.
 */
const char *cmd_missing_hint(char * const *devs, unsigned nr, const struct bch_fs_opts *opts,
			     int ret, struct printbuf *err);

/* Print "bcachefs: <msg>" on stderr and exit 1. */
noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exit codes shared by commands (fsck uses the fsck(8) set). */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,
	EXIT_USAGE	= 16,
};

#endif
