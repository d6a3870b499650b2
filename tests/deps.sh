#!/bin/sh
# Install the Debian packages the build and the tests need, when missing.
set -e
# --bench: the packages only benchmarks use (bench/40-format.sh compares
# format with mkfs.xfs and mkfs.btrfs, 55-sqlite.sh runs sqlite3); never fails when they cannot be had.
if [ "${1:-}" = --bench ]; then
	missing=""
	for p in xfsprogs btrfs-progs sqlite3; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && exit 0
	command -v apt-get > /dev/null || { echo "apt-get missing: not installing$missing"; exit 0; }
	echo "installing (bench only):$missing"
	SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
	{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing; } ||
		echo "could not install$missing (those comparisons are skipped)"
	exit 0
fi
PKGS="build-essential pkg-config libblkid-dev uuid-dev libscrypt-dev libsodium-dev
liblz4-dev libzstd-dev zlib1g-dev libkeyutils-dev libcmocka-dev libfuse3-dev
fuse3 zstd keyutils e2fsprogs util-linux stress-ng fuse2fs fio xfsprogs qemu-utils attr acl
clang libclang-rt-14-dev libfuzzer-14-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
