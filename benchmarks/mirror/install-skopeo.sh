#!/usr/bin/env bash
# Installs skopeo, the anchor of benchmarks/mirror/run.py, from Debian (idempotent; root or sudo). Only the benchmark
# needs it: catalog_mirror itself never runs skopeo.
set -euo pipefail
if command -v skopeo >/dev/null 2>&1; then
    skopeo --version
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends skopeo
skopeo --version
