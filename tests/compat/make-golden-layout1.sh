#!/usr/bin/env bash
# Writes the golden files of metadata layout 1 (tests/compat/layout-1/) with a built release
# 0.1.0: one master (and a worker, for file writes and a load job) on 127.0.0.1, a namespace
# made through `strata fs`, a snapshot, more changes, a backup, more changes, the namespace as
# that release lists it, and then the master killed with SIGKILL so that its Raft log keeps the
# entries past the snapshot. The current build replays these files in GoldenLayoutOneTest
# (core/server/master) and GoldenJournalToolsTest (journal-tools).
#
# Usage: tests/compat/make-golden-layout1.sh RELEASE_DIR [OUT_DIR]
#   RELEASE_DIR  a checkout of v0.1.0 built with `mvn -o -q -B package -DskipTests`
#   OUT_DIR      where to write (default: layout-1 beside this script); its journal/, backup/
#                and expected files are replaced
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1/bin/strata" ]; then
  echo "usage: $0 RELEASE_DIR [OUT_DIR]  (RELEASE_DIR: a built checkout of release 0.1.0)" >&2
  exit 2
fi
REL=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${2:-$HERE/layout-1}
WORK=$(mktemp -d /tmp/strata-golden.XXXXXX)
MASTER_PID=""
WORKER_PID=""

cleanup() {
  # Only the processes this script started, by their pids.
  [ -n "$MASTER_PID" ] && kill -9 "$MASTER_PID" 2>/dev/null || true
  [ -n "$WORKER_PID" ] && kill -9 "$WORKER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# A port nobody listens on now (bounded tries).
free_port() {
  local port tries
  for tries in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free port found" >&2
  exit 1
}

MASTER_RPC=$(free_port); MASTER_WEB=$(free_port); MASTER_JOURNAL=$(free_port)
WORKER_RPC=$(free_port); WORKER_DATA=$(free_port); WORKER_WEB=$(free_port)

# No site file of the user's, nothing under ~/.strata: every setting is given here.
mkdir -p "$WORK/conf" "$WORK/ufs" "$WORK/ext" "$WORK/ext2" "$WORK/local" "$WORK/logs"
export STRATA_CONF_DIR=$WORK/conf
export STRATA_HOME=$WORK/home
COMMON=(
  -Dstrata.home="$WORK/home"
  -Dstrata.conf.dir="$WORK/conf"
  -Dstrata.logs.dir="$WORK/logs"
  -Dstrata.master.hostname=127.0.0.1
  -Dstrata.master.rpc.port="$MASTER_RPC"
)
MASTER=(
  -Dstrata.master.bind.host=127.0.0.1
  -Dstrata.master.web.port="$MASTER_WEB"
  -Dstrata.master.journal.port="$MASTER_JOURNAL"
  -Dstrata.master.root.ufs="file://$WORK/ufs"
  -Dstrata.master.journal.dir="$WORK/journal"
  -Dstrata.master.metastore.dir="$WORK/metastore"
  -Dstrata.master.backup.dir="$WORK/backups"
  # Small segments, so the log has closed segments before and after the snapshot.
  -Dstrata.master.journal.segment.size=4KB
  # Snapshots only when asked for, so the files do not depend on timing.
  -Dstrata.master.journal.checkpoint.period=0
  -Dstrata.master.file.block.size=1MB
)
WORKER=(
  -Dstrata.worker.bind.host=127.0.0.1
  -Dstrata.worker.hostname=127.0.0.1
  -Dstrata.worker.rpc.port="$WORKER_RPC"
  -Dstrata.worker.data.port="$WORKER_DATA"
  -Dstrata.worker.web.port="$WORKER_WEB"
  -Dstrata.worker.tier.mem.dir="$WORK/worker/mem"
  -Dstrata.worker.tier.mem.capacity=16MB
  -Dstrata.worker.tier.ssd.dir="$WORK/worker/ssd"
  -Dstrata.worker.tier.ssd.capacity=64MB
)

strata() {
  "$REL/bin/strata" "${COMMON[@]}" "$@"
}

# Mode, owner, group and extended attributes, which release 0.1.0's `strata fs` cannot set:
# through that release's client API (Attributes.java).
SHELL_JAR=$(ls "$REL"/shell/target/strata-shell-*.jar | grep -v -e '-sources' -e '-tests' | head -n 1)
attributes() {
  java -cp "$SHELL_JAR:$REL/shell/target/lib/*" "${COMMON[@]}" "$HERE/Attributes.java" "$@"
}

# `fs ls -R /` reduced to what must survive a replay, one entry a line:
# path, type, length (- for directories), mode in octal, owner, group; tab-separated, sorted.
listing() {
  strata fs ls -R / | awk '
    function bits(s,   v) {
      v = 0
      if (substr(s, 1, 1) == "r") v += 4
      if (substr(s, 2, 1) == "w") v += 2
      if (substr(s, 3, 1) == "x") v += 1
      return v
    }
    {
      mode = $1
      if (mode !~ /^[-d][-r][-w][-x][-r][-w][-x][-r][-w][-x]$/) {
        print "unexpected mode " mode " in: " $0 > "/dev/stderr"; exit 1
      }
      path = $8
      type = substr(mode, 1, 1) == "d" ? "directory" : "file"
      if (type == "directory" && path != "/") sub(/\/$/, "", path)
      length_ = type == "directory" ? "-" : $4
      printf "%s\t%s\t%s\t0%d%d%d\t%s\t%s\n", path, type, length_, bits(substr(mode, 2, 3)),
          bits(substr(mode, 5, 3)), bits(substr(mode, 8, 3)), $2, $3
    }' | LC_ALL=C sort
}

# The mount points besides the root, one a line, sorted.
mounts() {
  strata fs mount | awk '$1 ~ /^\// && $1 != "/" { print $1 }' | LC_ALL=C sort
}

worker_live() {
  strata fsadmin report | grep -q "127.0.0.1:$WORKER_DATA *live"
}

wait_until() {
  local what=$1; shift
  for _ in $(seq 1 120); do
    if "$@" >/dev/null 2>&1; then return; fi
    sleep 1
  done
  echo "$what did not happen within 120 s; logs in $WORK/logs" >&2
  tail -n 30 "$WORK"/logs/*.out >&2 || true
  exit 1
}

# Local files to copy in, an under-store file found by the master, and a second store to mount.
printf 'id,label\n1,cat\n2,dog\n3,bird\n' > "$WORK/local/labels.csv"
head -c 3000 /dev/zero | tr '\0' 'a' > "$WORK/local/0001.bin"
head -c 1500000 /dev/zero | tr '\0' 'b' > "$WORK/local/0002.bin"   # two blocks of 1 MB
head -c 10 /dev/zero | tr '\0' 'c' > "$WORK/local/0003.bin"
printf 'eval set v1\n' > "$WORK/local/set.txt"
mkdir -p "$WORK/local/configs"
printf 'lr=0.1\n' > "$WORK/local/configs/train.conf"
printf 'batch=32\n' > "$WORK/local/configs/eval.conf"
printf 'run 1 done\n' > "$WORK/local/run-1.log"
printf 'written late\n' > "$WORK/local/late.txt"
mkdir -p "$WORK/ufs/preloaded"
printf 'in the under store before the master started\n' > "$WORK/ufs/preloaded/readme.txt"
mkdir -p "$WORK/ext/shards" "$WORK/ext2"
head -c 4096 /dev/zero | tr '\0' 'x' > "$WORK/ext/shards/shard-0.bin"
head -c 2048 /dev/zero | tr '\0' 'y' > "$WORK/ext/shards/shard-1.bin"
printf '{"shards": 2}\n' > "$WORK/ext/index.json"
printf 'temporary\n' > "$WORK/ext2/tmp.txt"

echo "Starting the master (rpc $MASTER_RPC) and a worker (rpc $WORKER_RPC) of $REL"
"$REL/bin/strata" "${COMMON[@]}" "${MASTER[@]}" master start > "$WORK/logs/master.out" 2>&1 &
MASTER_PID=$!
wait_until "the master answering" strata fsadmin report
"$REL/bin/strata" "${COMMON[@]}" "${WORKER[@]}" worker start > "$WORK/logs/worker.out" 2>&1 &
WORKER_PID=$!
wait_until "the worker registering" worker_live

echo "Before the snapshot"
strata fs mkdir -p /data/train/images
strata fs mkdir -p /data/eval
strata fs mkdir /scratch
strata fs mkdir /scratch/tmp
strata fs cp "local:$WORK/local/labels.csv" /data/train/labels.csv
strata fs cp "local:$WORK/local/0001.bin" /data/train/images/0001.bin
strata fs cp "local:$WORK/local/0002.bin" /data/train/images/0002.bin
strata fs cp "local:$WORK/local/0003.bin" /data/train/images/0003.bin
strata fs cp "local:$WORK/local/set.txt" /data/eval/set.txt
strata fs cp -R "local:$WORK/local/configs" /configs
attributes set /data/train mode=0750 owner=trainer group=ml
attributes set /data/train/labels.csv mode=0640 owner=alice group=staff \
  xattr.user.origin=golden-layout-1
attributes set /data/train/images/0001.bin xattr.user.label=cat xattr.user.split=train
strata fs mv /data/eval/set.txt /data/eval/set-v1.txt
strata fs mv /configs /data/configs
strata fs rm /data/train/images/0003.bin
strata fs rm -R /scratch
strata fs mount /ext "file://$WORK/ext"
# Listing loads what the under stores hold (/preloaded, the mount's files) into the namespace.
strata fs ls -R / > /dev/null
strata fs load /data/train
strata fsadmin checkpoint

echo "After the snapshot"
strata fs mkdir -p /after-checkpoint/logs
strata fs cp "local:$WORK/local/run-1.log" /after-checkpoint/logs/run-1.log
strata fs mv /data/train/images/0002.bin /data/train/images/0002-renamed.bin
attributes set /after-checkpoint mode=0700 owner=bob group=ops xattr.user.stage=post-checkpoint
strata fs rm /data/eval/set-v1.txt
strata fs mount /ext2 "file://$WORK/ext2"
strata fs ls -R /ext2 > /dev/null
strata fs unmount /ext2
strata fs ls -R / > /dev/null

echo "The backup"
listing > "$WORK/backup-namespace.txt"
attributes xattrs > "$WORK/backup-xattrs.txt"
mounts > "$WORK/backup-mounts.txt"
strata fsadmin backup --to "$WORK/backups" | tee "$WORK/backup.out"
BACKUP=$(ls -d "$WORK"/backups/backup-*)
if [ "$(echo "$BACKUP" | wc -l)" != 1 ]; then
  echo "expected one backup folder, found: $BACKUP" >&2
  exit 1
fi

echo "After the backup"
strata fs mkdir /after-backup
strata fs cp "local:$WORK/local/late.txt" /after-backup/late.txt
strata fs rm -R /data/configs
attributes set /data/train/labels.csv mode=0600
strata fs ls -R / > /dev/null

echo "The namespace as release 0.1.0 lists it"
listing > "$WORK/namespace.txt"
attributes xattrs > "$WORK/xattrs.txt"
mounts > "$WORK/mounts.txt"

echo "Killing the master (SIGKILL), then stopping the worker"
kill -9 "$MASTER_PID"
wait "$MASTER_PID" 2>/dev/null || true
MASTER_PID=""
kill "$WORKER_PID"
wait "$WORKER_PID" 2>/dev/null || true
WORKER_PID=""

echo "Writing $OUT"
rm -rf "$OUT/journal" "$OUT/backup"
mkdir -p "$OUT"
# Everything a replay reads; not the locks a running master held.
(cd "$WORK/journal" && find . -type f ! -name '.lock' ! -name 'in_use.lock' -print0 \
  | while IFS= read -r -d '' f; do
      mkdir -p "$OUT/journal/$(dirname "$f")"
      cp -p "$f" "$OUT/journal/$f"
    done)
cp -rp "$BACKUP" "$OUT/backup"
basename "$BACKUP" > "$OUT/backup-name.txt"
cp "$WORK/namespace.txt" "$OUT/expected-namespace.txt"
cp "$WORK/xattrs.txt" "$OUT/expected-xattrs.txt"
cp "$WORK/mounts.txt" "$OUT/expected-mounts.txt"
cp "$WORK/backup-namespace.txt" "$OUT/expected-backup-namespace.txt"
cp "$WORK/backup-xattrs.txt" "$OUT/expected-backup-xattrs.txt"
cp "$WORK/backup-mounts.txt" "$OUT/expected-backup-mounts.txt"
(cd "$REL" && git rev-parse HEAD 2>/dev/null || echo unknown) > "$OUT/release-commit.txt"
du -sh "$OUT"
