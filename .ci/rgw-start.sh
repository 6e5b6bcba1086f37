#!/usr/bin/env bash
# Starts a throwaway S3 store for CofferS3's integration tests: Ceph's RADOS Gateway over one monitor
# and one OSD that keeps its objects in memory, all on 127.0.0.1, in DIR (default /tmp/coffer-rgw).
# Prints the endpoint URL and nothing else on standard output; the test user's keys are
# RGW_ACCESS_KEY / RGW_SECRET_KEY (defaults below: for this loopback store only). Stop it with
# .ci/rgw-stop.sh DIR. Ports: MON_PORT (default 16789), RGW_PORT (default 17480).
#
# What makes it start in about a second: no manager daemon, a memstore OSD, pools of one replica,
# and `paxos propose interval = 0.05` (the monitor's default 1 s wait before each map change is what
# a cold start spends its time on). Ceph 16.2 has no single-process backend, so the monitor and the
# OSD are needed; cephx stays on because radosgw 16.2 will not start without it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
dir=${1:-/tmp/coffer-rgw}
mon_port=${MON_PORT:-16789}
rgw_port=${RGW_PORT:-17480}
access_key=${RGW_ACCESS_KEY:-COFFERCIACCESS}
secret_key=${RGW_SECRET_KEY:-coffer-ci-secret}

start() {
  if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends radosgw ceph-mon ceph-osd >/dev/null
  fi
  if [ -e "$dir" ]; then echo "$dir exists: stop that store first (.ci/rgw-stop.sh $dir)" >&2; exit 1; fi
  mkdir -p "$dir"/{mon,osd,rgw,run}
  local fsid; fsid=$(cat /proc/sys/kernel/random/uuid)
  export CEPH_CONF=$dir/ceph.conf
  cat >"$CEPH_CONF" <<CONF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
public network = 127.0.0.0/8
ms bind msgr2 = false
keyring = $dir/keyring
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/\$name.log
mon data = $dir/mon
osd data = $dir/osd
osd objectstore = memstore
memstore device bytes = 4294967296
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon data avail warn = 1
paxos propose interval = 0.05
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/rgw
rgw enable usage log = false
# Deleted objects and aborted parts go back to the in-memory OSD within seconds, not hours: the
# tests and benchmarks delete gigabytes over a run.
rgw gc obj min wait = 5
rgw gc processor period = 5
CONF
  local keyring=$dir/keyring
  ceph-authtool --create-keyring "$keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$keyring" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
  ceph-authtool "$keyring" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$dir/monmap" --keyring "$keyring"
  # Each daemon forks into the background (its PID lands in run/NAME.pid, which rgw-stop.sh reads);
  # none keeps this script's standard output, so $(.ci/rgw-start.sh) returns.
  ceph-mon -i a </dev/null >>"$dir/daemons.out" 2>&1
  local osd_uuid osd_id; osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  osd_id=$(ceph --connect-timeout 30 osd new "$osd_uuid")
  ceph-osd -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" </dev/null >>"$dir/daemons.out" 2>&1
  ceph-osd -i "$osd_id" </dev/null >>"$dir/daemons.out" 2>&1
  for _ in $(seq 60); do ceph osd stat 2>/dev/null | grep -q '1 up' && break; sleep 0.5; done
  radosgw -n client.rgw </dev/null >>"$dir/daemons.out" 2>&1
  for _ in $(seq 120); do curl -fs -o /dev/null "http://127.0.0.1:$rgw_port/" && break; sleep 0.5; done
  curl -fs -o /dev/null "http://127.0.0.1:$rgw_port/" || { echo "radosgw did not answer on port $rgw_port; logs in $dir" >&2; exit 1; }
  radosgw-admin user create --uid=coffer-ci --display-name=coffer-ci --access-key="$access_key" --secret="$secret_key" >/dev/null
}
start >&2
echo "http://127.0.0.1:$rgw_port"
