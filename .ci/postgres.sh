#!/usr/bin/env bash
# Installs (if needed) and starts the distribution's PostgreSQL on the loopback interface and prints the
# URL the tests use (COFFER_TEST_DATABASE_URL). Idempotent; the password is for this local,
# loopback-only test cluster and nothing else.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# Standard output carries the URL and nothing else: every tool below talks to standard error
# (pg_ctlcluster, for one, prints "Removed stale pid file." on standard output). No extra file
# descriptor is opened for the URL: the PostgreSQL daemon would inherit it and keep $(…) waiting.
start() {
  if ! command -v pg_lsclusters >/dev/null || [ -z "$(ls /usr/lib/postgresql 2>/dev/null)" ]; then
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >/dev/null
  fi
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version main$"; then
    pg_createcluster "$version" main >/dev/null
  fi
  if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' | grep -q online; then
    pg_ctlcluster "$version" main start
  fi
  for _ in $(seq 30); do
    su postgres -c "psql -qAtc 'select 1'" >/dev/null 2>&1 && break
    sleep 1
  done
  su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'coffer-ci'\"" >/dev/null
  # The test run starts dozens of servers against this cluster at once (each with its own pool,
  # several suites racing instances on one database): 100 connections, the default, ran out
  # (53300 too_many_connections). Raised once; the change needs a restart.
  if [ "$(su postgres -c "psql -qAtc 'show max_connections'")" -lt 400 ]; then
    su postgres -c "psql -qc 'ALTER SYSTEM SET max_connections = 400'" >/dev/null
    pg_ctlcluster "$version" main restart
    for _ in $(seq 30); do
      su postgres -c "psql -qAtc 'select 1'" >/dev/null 2>&1 && break
      sleep 1
    done
  fi
  port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')
  url="postgres://postgres:coffer-ci@127.0.0.1:$port/postgres"
  psql "$url" -qAtc 'select 1' >/dev/null
}
start >&2
echo "$url"
