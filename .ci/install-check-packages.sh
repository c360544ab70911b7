#!/usr/bin/env bash
# Installs the Debian packages the checks of `make test` need when they are missing: rsync (sanity copies the tree),
# the shellcheck binary (a sanity test of ansible-test), gnupg (the catalog_release unit tests sign a commit) and
# chromium (the docs site is checked in a headless browser). Idempotent. apt's lock is waited for: the testbed's packages may be
# installing beside it.
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
echo ">>> installing the checks' Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${need[@]}" </dev/null
