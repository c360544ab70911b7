"""kubeforge testbed: a real Kubernetes control plane, KWOK nodes, OLM (with packageserver) and opm serve as local processes.

Everything listens on and is contacted through 127.0.0.1 only. Binaries are built from Go modules by
scripts/build.sh into a cache outside the repository. See README.md in this folder.
"""

from testbed.cluster import Testbed  # noqa: F401
from testbed.errors import TestbedError  # noqa: F401
