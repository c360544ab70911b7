"""Two processes bringing the testbed up or down at once take turns (the second then sees the first's state)."""

import json
import subprocess
import sys
import time
from pathlib import Path

from testbed import cluster

_HOLDER = """
import json, sys, time
from pathlib import Path
from testbed import cluster
bed = cluster.Testbed(Path(sys.argv[1]))
with bed._exclusive():
    print("locked", flush=True)
    time.sleep(1.5)
    bed.state = {"nodes": 7}
    bed._save_state()
"""


def test_a_second_process_waits_for_the_lock_and_reloads_the_state(tmp_path):
    tests_dir = Path(cluster.__file__).resolve().parents[1]
    holder = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(tests_dir)}
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        bed = cluster.Testbed(tmp_path)
        assert bed.state == {}
        started = time.monotonic()
        with bed._exclusive():
            waited = time.monotonic() - started
            assert bed.state == {"nodes": 7}
        assert waited > 0.5
        assert json.loads((tmp_path / "state.json").read_text()) == {"nodes": 7}
    finally:
        holder.wait(timeout=10)
