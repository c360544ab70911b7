"""The YAML examples of the documentation (README.md, docs/*.md, roles/*/README.md) and how each is checked.

Every fenced ``yaml`` block is preceded by one marker comment:

- ``<!-- example: run <id> -->``: tests/integration/docs/test_doc_examples.py runs it on the testbed as written
  (a list of tasks in a play on localhost, or the plays themselves), with the setup its table gives ``<id>`` - or
  the test ``RUN_ELSEWHERE`` names does, which may also take it as a file the page tells the reader to write (an
  inventory source, a variables file);
- ``<!-- example: not run - <reason> -->``: why the testbed cannot run it (an external registry, a fragment, ...);
- ``<!-- minimal-bundle: <path> -->``: a file of docs/examples/minimal-bundle (tests/unit/docs/test_doc_examples.py).
"""

import re
from collections import namedtuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
Block = namedtuple("Block", ["path", "line", "kind", "detail", "body"])
FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.S | re.M)
MARKER = re.compile(r"<!-- (?:example: (?P<kind>run|not run)(?: (?P<run_id>[a-z0-9-]+))?(?: - (?P<reason>.+?))?|minimal-bundle: (?P<file>\S+)) -->\n$")


def doc_files(root=ROOT):
    return [root / "README.md"] + sorted((root / "docs").glob("*.md")) + sorted((root / "roles").glob("*/README.md"))


def blocks(root=ROOT):
    """Every YAML block of the documentation, with its marker: kind ``run``/``not run``/``file``/None (no marker)."""
    found = []
    for path in doc_files(root):
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            before = text[: match.start()]
            previous_line = before.rsplit("\n", 2)[-2] + "\n" if before.count("\n") >= 1 else ""
            marker = MARKER.search(previous_line)
            line = before.count("\n") + 1
            rel = str(path.relative_to(root))
            if marker is None:
                found.append(Block(rel, line, None, None, match.group(1)))
            elif marker.group("file"):
                found.append(Block(rel, line, "file", marker.group("file"), match.group(1)))
            else:
                detail = marker.group("run_id") if marker.group("kind") == "run" else marker.group("reason")
                found.append(Block(rel, line, marker.group("kind"), detail, match.group(1)))
    return found


# Examples run by another test than tests/integration/docs/test_doc_examples.py (or by a molecule scenario): id -> that
# test's file.
RUN_ELSEWHERE = {
    "operator-olm-install": "tests/integration/operator/test_operator_image_real_node.py",
    # the fleet guide's inventory source, install play and rollout variables need the testbed's member clusters
    "fleet-inventory": "tests/integration/fleet/test_fleet_rollout.py",
    "fleet-install": "tests/integration/fleet/test_fleet_rollout.py",
    "fleet-rollout": "tests/integration/fleet/test_fleet_rollout.py",
    # the olm_migrate role's play needs an operator installed by OLM v0 and a ClusterCatalog serving it: the molecule
    # scenario's converge makes them, then runs the example (tests/unit/docs/test_doc_examples.py: as written)
    "olm-migrate-role": "molecule/olm_migrate/converge.yml",
}
# Of those, the ones that are files the reader writes (a mapping), not tasks or plays.
FILE_EXAMPLES = ("fleet-inventory", "fleet-rollout")


def runnable(root=ROOT):
    """``{id: Block}`` of the examples marked ``run``."""
    return {b.detail: b for b in blocks(root) if b.kind == "run"}
