"""Filter benchmark (issue #21): our oc-mirror selection (``fbc.action.filter``) against oc-mirror v2's own code.

The anchor is what oc-mirror v2 runs: the ``github.com/sherine-k/catalog-filter`` mirror filter (v0.0.5, pinned by
``filter-anchor/go.mod``/``go.sum``) over a catalog loaded and written with operator-registry's ``declcfg``, built
once from the Go module proxy into ``~/.cache/kubeforge-bench`` (opm itself has no filter command). Ours is the same
load -> filter -> write in a fresh ``python`` process (what catalog_render with ``select`` and catalog_mirror run).

Input: the generated catalog of benchmarks/gen_catalog.py (500 packages, JSON); the selection keeps 10 packages by
name (every 50th: the head of each of their channels). Outputs compared: packages with their default channel,
channels with their entries, and bundle names, loaded back from both output directories, must be equal. Wall time
and peak RSS (VmHWM) are medians of ``--repeat`` runs, the tools alternating. Target: ours <= 0.5x the anchor's wall.

    .venv/bin/python benchmarks/mirror/filter.py [--repeat 3] [--out r.json] [--markdown r.md]

This is a benchmark, not a test: nothing here asserts on timings.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_catalog  # noqa: E402
from benchlib import CACHE, COLLECTIONS, fmt, log, machine, median, write_results  # noqa: E402
from run import measured_run  # noqa: E402

ANCHOR_DIR = os.path.join(HERE, "filter-anchor")

OURS = r"""
import json, sys
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import filter_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import write_fs
cfg, _warnings = filter_catalog(load(sys.argv[1]), json.load(open(sys.argv[2])))
write_fs(cfg, sys.argv[3], "json")
"""


def build_anchor():
    """The anchor binary, built once per go.sum (from the Go module proxy)."""
    with open(os.path.join(ANCHOR_DIR, "go.sum"), "rb") as f:
        key = hashlib.sha256(f.read() + open(os.path.join(ANCHOR_DIR, "main.go"), "rb").read()).hexdigest()[:16]
    binary = os.path.join(CACHE, "filter-anchor-%s" % key)
    if not os.path.isfile(binary):
        if not shutil.which("go"):
            raise SystemExit("go is not installed (the testbed build needs it too)")
        log("building the catalog-filter anchor into %s" % binary)
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(["go", "build", "-mod=readonly", "-o", binary + ".tmp", "."], cwd=ANCHOR_DIR, check=True)  # noqa: S603,S607
        os.replace(binary + ".tmp", binary)
    return binary


def summary(directory):
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load

    cfg = load(directory)
    return {
        "packages": sorted((p["name"], p.get("defaultChannel")) for p in cfg.packages),
        "channels": sorted((c["package"], c["name"], tuple(sorted(e["name"] for e in c.get("entries") or ()))) for c in cfg.channels),
        "bundles": sorted(b["name"] for b in cfg.bundles),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    gen_catalog.ensure_collection_link()
    sys.path.insert(0, COLLECTIONS)
    manifest = gen_catalog.generate(log=log)
    catalog = manifest["json"]
    names = sorted(os.listdir(catalog))[::50][:10]
    anchor = build_anchor()
    root = tempfile.mkdtemp(prefix="kubeforge-bench-filter-")
    ours_sel, anchor_sel = os.path.join(root, "ours.json"), os.path.join(root, "anchor.json")
    with open(ours_sel, "w") as f:
        json.dump({"full": False, "packages": [{"name": n, "channels": []} for n in names]}, f)
    with open(anchor_sel, "w") as f:
        json.dump({"packages": [{"name": n} for n in names]}, f)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTIONS] + [p for p in sys.path if p.endswith("site-packages")]))
    argvs = {"ours": [sys.executable, "-c", OURS, catalog, ours_sel], "catalog-filter": [anchor, catalog, anchor_sel]}
    runs = {tool: [] for tool in argvs}
    outputs = {}
    try:
        for rep in range(args.repeat):
            for tool in argvs if rep % 2 == 0 else reversed(list(argvs)):
                out = os.path.join(root, "%s-%d" % (tool, rep))
                figures = measured_run(argvs[tool] + [out], env)
                if figures["rc"] != 0:
                    raise SystemExit("%s failed: %s" % (tool, figures["stderr"][-2000:]))
                outputs[tool] = summary(out)
                shutil.rmtree(out)
                runs[tool].append({k: figures[k] for k in ("wall_s", "cpu_s", "maxrss_mib")})
                log("%s run %d: %.2fs, %.0f MiB peak" % (tool, rep + 1, figures["wall_s"], figures["maxrss_mib"]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    same = outputs["ours"] == outputs["catalog-filter"]
    med = {tool: {k: median([r[k] for r in rs]) for k in ("wall_s", "maxrss_mib")} for tool, rs in runs.items()}
    results = {
        "machine": machine(),
        "catalog": manifest,
        "selected": names,
        "runs": runs,
        "medians": med,
        "outputs_equal": same,
        "kept": {k: len(v) for k, v in outputs["ours"].items()},
    }
    if not same:
        results["differences"] = {k: [sorted(set(map(str, outputs["ours"][k])) ^ set(map(str, outputs["catalog-filter"][k])))[:10]] for k in outputs["ours"]}
    lines = ["| tool | wall s (median) | peak RSS MiB | wall vs anchor | outputs equal |", "|---|---|---|---|---|"]
    for tool, m in med.items():
        lines.append("| %s | %s | %s | %s | %s |" % (tool, fmt(m["wall_s"]), fmt(m["maxrss_mib"], 0), fmt(m["wall_s"] / med["catalog-filter"]["wall_s"]), same))
    write_results(results, "\n".join(lines) + "\n", args.out, args.markdown)


if __name__ == "__main__":
    main()
