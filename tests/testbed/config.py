"""Where the testbed keeps its binaries, run state and logs."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "scripts" / "build.sh"
STAGES_DIR = HERE / "data" / "stages"
FIXTURES_DIR = HERE / "fixtures"

CACHE_DIR = Path(os.environ.get("KUBEFORGE_TESTBED_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kubeforge-testbed")
RUN_DIR = Path(os.environ.get("KUBEFORGE_TESTBED_RUN") or CACHE_DIR / "run")
# etcd's data lives on tmpfs: the testbed is disposable and fsync-free storage makes it fast.
ETCD_DATA_ROOT = Path(os.environ.get("KUBEFORGE_TESTBED_ETCD_ROOT") or "/dev/shm")

# Images the custom KWOK stages recognise (reserved .invalid names: never pulled, never resolvable).
CRASHLOOP_IMAGE = "example.invalid/kubeforge/crashloop:v1"
NEVER_READY_IMAGE = "example.invalid/kubeforge/never-ready:v1"

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
SERVICE_CIDR = "10.0.0.0/24"
POD_CIDR = "10.244.0.0/16"
