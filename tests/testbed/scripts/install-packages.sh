#!/usr/bin/env bash
# Installs the OCI registry used by the testbed and tests/integration/registry (Debian's docker-registry = distribution v2.8)
# and htpasswd (apache2-utils, bcrypt entries), and the real node's runtime: containerd 1.6, runc and the CNI plugins
# (containernetworking-plugins, in /usr/lib/cni) from Debian. Idempotent; run as root (or through sudo) in the build
# step, never from a test.
set -euo pipefail
need=()
[ -x /usr/bin/docker-registry ] || need+=(docker-registry)
command -v htpasswd >/dev/null 2>&1 || need+=(apache2-utils)
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
if [ "${#need[@]}" -eq 0 ]; then
    echo "docker-registry, htpasswd, containerd, runc and the CNI plugins already installed"
    exit 0
fi
# One apt-get of this project at a time: `make test` runs the checks' and the testbed's package installs side by side,
# and `apt-get update` does not wait for apt's own lock.
exec 9>>/tmp/kubeforge-apt.lock
flock -w 900 9 || { echo "waited 15 minutes for another apt-get of this project" >&2; exit 1; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${need[@]}"
# The package may try to start a system service; the tests start their own instance on a free loopback port.
for service in docker-registry containerd; do
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
        $SUDO systemctl disable --now "$service" || true
    fi
done
/usr/bin/docker-registry --version
