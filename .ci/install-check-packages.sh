#!/usr/bin/env bash
# Installs the Debian packages the checks of `make test` need when they are missing: rsync (sanity copies the tree),
# the shellcheck binary (a sanity test of ansible-test), gnupg (the catalog_release unit tests sign a commit) and
# chromium (the docs site is checked in a headless browser). Idempotent.
set -euo pipefail
need=()
command -v rsync >/dev/null 2>&1 || need+=(rsync)
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v gpg >/dev/null 2>&1 || need+=(gnupg)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ "${#need[@]}" -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
# One apt-get of this project at a time: `make test` runs the checks' and the testbed's package installs side by side,
# and `apt-get update` does not wait for apt's own lock.
exec 9>>/tmp/kubeforge-apt.lock
flock -w 900 9 || { echo "waited 15 minutes for another apt-get of this project" >&2; exit 1; }
echo ">>> installing the checks' Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need[@]}" </dev/null
