"""How the parallel integration tests are split and ordered, and the record that orders them.

A work unit is a test file, or every file naming the same ``xdist_group`` in its module-level ``pytestmark``.
``--timeline FILE`` records when each test ran on which worker; ``python -m lib.scheduling costs FILE`` turns such
a record into the unit costs the scheduler reads (tests/integration/unit_costs.json), and ``summary FILE`` shows
each worker's units and how long it stood idle at the end.
"""

import ast
import functools
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

COSTS_FILE = "tests/integration/unit_costs.json"
# A unit not in the costs file yet (a new test file) is scheduled as if it took this long.
DEFAULT_UNIT_COST = 60.0


@functools.cache
def declared_group(path):
    """The group a test file names in its module-level ``pytestmark`` (``pytest.mark.xdist_group("name")``), or None."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            for call in ast.walk(node.value):
                if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "xdist_group" and call.args:
                    return call.args[0].value
    return None


def unit_of(root, nodeid):
    """The work unit of a test: its file's declared group, else its file."""
    path = nodeid.split("::", 1)[0]
    return declared_group(str(Path(root) / path)) or path


def unit_costs(path):
    """``{unit: seconds}`` from the costs file; empty when there is none."""
    try:
        with open(path, encoding="utf-8") as handle:
            return {str(unit): float(seconds) for unit, seconds in json.load(handle).items()}
    except FileNotFoundError:
        return {}


def write_json(path, data):
    """Write ``data`` as JSON to ``path`` whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class Timeline:
    """A pytest plugin (on the controller) recording every test phase: node id, phase, worker, start, stop, outcome."""

    def __init__(self, path):
        self.path, self.rows = path, []

    def pytest_runtest_logreport(self, report):
        node = getattr(report, "node", None)
        worker = node.gateway.id if node is not None else "main"
        self.rows.append(
            {"nodeid": report.nodeid, "when": report.when, "worker": worker, "start": report.start, "stop": report.stop, "outcome": report.outcome}
        )

    def pytest_sessionfinish(self, session):
        write_json(self.path, {"root": str(session.config.rootpath), "rows": self.rows})


def units(record):
    """``{unit: (worker, start, stop)}`` from a timeline record."""
    spans = {}
    for row in record["rows"]:
        unit = unit_of(record["root"], row["nodeid"])
        worker, start, stop = spans.get(unit, (row["worker"], row["start"], row["stop"]))
        spans[unit] = (worker, min(start, row["start"]), max(stop, row["stop"]))
    return spans


def costs(record):
    """``{unit: seconds}``: how long each unit ran, rounded up to whole seconds."""
    return {unit: float(int(span[2] - span[1]) + 1) for unit, span in units(record).items()}


def summary(record):
    """Lines: each worker's units in order with their seconds, its busy time and its idle time before the last ended."""
    spans = units(record)
    begin = min(span[1] for span in spans.values())
    end = max(span[2] for span in spans.values())
    by_worker = defaultdict(list)
    for unit, (worker, start, stop) in spans.items():
        by_worker[worker].append((start, stop, unit))
    lines = [f"wall {end - begin:.0f} s, {len(spans)} units"]
    for worker in sorted(by_worker):
        rows = sorted(by_worker[worker])
        busy = sum(row[1] - row[0] for row in rows)
        lines.append(f"{worker}: busy {busy:.0f} s, done at +{rows[-1][1] - begin:.0f} s, idle at the end {end - rows[-1][1]:.0f} s")
        lines.extend(f"  +{start - begin:5.0f} {stop - start:5.0f} s  {unit}" for start, stop, unit in rows)
    return lines


def main(argv):
    if len(argv) != 3 or argv[1] not in ("costs", "summary"):
        sys.exit("usage: python -m lib.scheduling costs|summary TIMELINE.json")
    with open(argv[2], encoding="utf-8") as handle:
        record = json.load(handle)
    if argv[1] == "costs":
        json.dump(costs(record), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print("\n".join(summary(record)))


if __name__ == "__main__":
    main(sys.argv)
