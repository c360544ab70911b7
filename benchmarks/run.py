"""Side-by-side benchmark of the collection's pure-Python FBC engine and opm (validate, render JSON / YAML).

Every measurement is a fresh process (ours: the venv Python importing
``ansible_collections.kubeforge.operators.plugins.module_utils.fbc``; opm: the testbed's opm binary), timed by
wall clock, with its peak RSS taken both from ``wait4`` (largest single process of the tree) and from sampling the
summed RSS of the whole process tree every 20 ms (our loader may fork parser processes). The reported peak RSS is
the larger of the two. Ours and opm run interleaved (alternating which goes first) and each cell is the median of
``--repeat`` runs. Render outputs of both tools are compared byte for byte.

Inputs: the real catalogs in tests/data (whole OCP-version dirs and the two biggest single packages) and a generated
catalog (benchmarks/gen_catalog.py: >= 500 packages, >= 10,000 real bundles) in JSON and in YAML.

    .venv/bin/python benchmarks/run.py [--quick] [--repeat N] [--out results.json] [--markdown results.md]

This is a benchmark, not a test: nothing here asserts on timings. Targets (issue #3): ours <= 0.5x opm's wall
time and <= 1.0x opm's peak RSS.
"""

import argparse
import contextlib
import hashlib
import json
import multiprocessing
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_catalog  # noqa: E402
from benchlib import machine, write_results  # noqa: E402

REPO = gen_catalog.REPO
SOURCE = gen_catalog.DEFAULT_SOURCE
WALL_TARGET = 0.5
RSS_TARGET = 1.0
OPS = ("validate", "render-json", "render-yaml", "diff")
# per-op wall targets where issue #3's 0.5 is not the one (issue #33: catalog_diff <= opm rendering both catalogs)
WALL_TARGETS = {"diff": 1.0}

OURS_VALIDATE = """\
import sys
sys.path.insert(0, {collections!r})
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model import validate
r = validate.validate_catalog(sys.argv[1])
if not r.valid:
    sys.stderr.write((r.opm_error or "invalid") + "\\n")
    sys.exit(1)
"""

OURS_RENDER = """\
import sys
sys.path.insert(0, {collections!r})
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import render_catalog
with open(sys.argv[3], "wb") as f:
    render_catalog.render_catalog(sys.argv[1], f, sys.argv[2])
"""


OURS_DIFF = """\
import json, sys
sys.path.insert(0, {collections!r})
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import diff
result = diff.diff_catalogs(sys.argv[1], sys.argv[2])
with open(sys.argv[3], "w") as f:
    json.dump(result, f)
"""

# opm has no diff: what it takes to see both catalogs is rendering both (JSON, its fastest output)
OPM_DIFF = 'set -e; "$0" render "$1" -o json > "$3.old"; "$0" render "$2" -o json > "$3.new"'


def find_opm():
    script = os.path.join(REPO, "tests", "testbed", "scripts", "build.sh")
    try:
        bindir = subprocess.run(["bash", script, "--print-bin"], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("cannot locate the testbed bin dir (%s): run `make testbed-build` first" % e) from None
    opm = os.path.join(bindir, "opm")
    if not os.access(opm, os.X_OK):
        raise SystemExit("opm not found at %s: run `make testbed-build` first" % opm)
    return opm


# ----------------------------------------------------------------------------------------- measuring


def _tree_rss_kb(pid):
    """Summed VmRSS (KiB) of pid and all its descendants, read from /proc (0 when gone)."""
    total = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for tid in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, tid)) as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(argv, stdout_path=None, env=None):
    """Run argv once; returns dict(wall_s, maxrss_kb, tree_rss_kb, rss_kb, rc, stderr)."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = tempfile.TemporaryFile()
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, close_fds=True, env=env)
        peak = [0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
                done.wait(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")[-2000:]
    finally:
        err.close()
        if stdout_path:
            out.close()
    return {
        "wall_s": round(wall, 4),
        "maxrss_kb": usage.ru_maxrss,
        "tree_rss_kb": peak[0],
        "rss_kb": max(usage.ru_maxrss, peak[0]),
        "rc": proc.returncode,
        "stderr": stderr,
    }


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


GC_OFF_PREFIX = "import gc\ngc.disable()\n"


def commands(tool, op, path, out_file, opm, python, gc_off=False, new_path=None):
    """argv (and stdout file) of one operation for one tool (``diff``: ``path`` against ``new_path``)."""
    collections = gen_catalog.COLLECTIONS
    prefix = GC_OFF_PREFIX if gc_off else ""
    if op == "diff":
        if tool == "opm":
            return ["sh", "-c", OPM_DIFF, opm, path, new_path, out_file], None
        return [python, "-c", prefix + OURS_DIFF.format(collections=collections), path, new_path, out_file], None
    if tool == "opm":
        if op == "validate":
            return [opm, "validate", path], None
        return [opm, "render", path, "-o", op.split("-")[1]], out_file
    if op == "validate":
        return [python, "-c", prefix + OURS_VALIDATE.format(collections=collections), path], None
    return [python, "-c", prefix + OURS_RENDER.format(collections=collections), path, op.split("-")[1], out_file], None


def python_env(bytecode):
    """Environment of our runs. bytecode=True: compiled modules cached outside the repository (warm imports, like
    an installed package); False: every run compiles the sources (PYTHONDONTWRITEBYTECODE, like AnsiballZ)."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(gen_catalog.DEFAULT_CACHE, "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _json_stream(path):
    """The objects of a JSON stream (opm render -o json), one at a time."""
    decoder = json.JSONDecoder()
    with open(path) as f:
        text = f.read()
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return
        obj, i = decoder.raw_decode(text, i)
        yield obj


def opm_sets(path):
    """What a simple reading of opm's rendered JSON says about a catalog: name sets and per-package facts."""
    out = {"packages": {}, "channels": set(), "entries": set(), "bundles": set(), "deprecations": {}, "max_ocp": {}}
    for obj in _json_stream(path):
        schema = obj.get("schema")
        if schema == "olm.package":
            out["packages"][obj["name"]] = obj.get("defaultChannel")
        elif schema == "olm.channel":
            out["channels"].add((obj["package"], obj["name"]))
            out["entries"].update((obj["package"], obj["name"], e["name"]) for e in obj.get("entries") or ())
        elif schema == "olm.bundle":
            out["bundles"].add((obj["package"], obj["name"]))
            values = [p.get("value") for p in obj.get("properties") or () if p.get("type") == "olm.maxOpenShiftVersion"]
            if values:
                out["max_ocp"][(obj["package"], obj["name"])] = values[0] if len(values) == 1 else values
        elif schema == "olm.deprecations":
            for e in obj.get("entries") or ():
                ref = e.get("reference") or {}
                out["deprecations"][(obj["package"], ref.get("schema"), ref.get("name") or "")] = e.get("message")
    return out


def compare_diff(ours_file, opm_prefix):
    """Ours' diff against the one derived from opm's renders of both catalogs (name sets, default channels,
    deprecations, maxOpenShiftVersion per bundle); returns the list of mismatches (empty when they agree)."""
    with open(ours_file) as f:
        ours = json.load(f)
    old, new = opm_sets(opm_prefix + ".old"), opm_sets(opm_prefix + ".new")
    both_channels = old["channels"] & new["channels"]
    both_bundles = old["bundles"] & new["bundles"]
    expected = {
        "packages added": sorted(set(new["packages"]) - set(old["packages"])),
        "packages removed": sorted(set(old["packages"]) - set(new["packages"])),
        "channels added": sorted(new["channels"] - old["channels"]),
        "channels removed": sorted(old["channels"] - new["channels"]),
        "bundles added": sorted(new["bundles"] - old["bundles"]),
        "bundles removed": sorted(old["bundles"] - new["bundles"]),
        "channel entries added": sorted(e for e in new["entries"] - old["entries"] if e[:2] in both_channels),
        "channel entries removed": sorted(e for e in old["entries"] - new["entries"] if e[:2] in both_channels),
        "default channels": sorted(
            (p, old["packages"][p], new["packages"][p]) for p in set(old["packages"]) & set(new["packages"]) if old["packages"][p] != new["packages"][p]
        ),
        "deprecations added": sorted(k + (new["deprecations"][k],) for k in set(new["deprecations"]) - set(old["deprecations"])),
        "deprecations removed": sorted(k + (old["deprecations"][k],) for k in set(old["deprecations"]) - set(new["deprecations"])),
        "maxOpenShiftVersion per bundle": sorted(
            (b[0], b[1], json.dumps(old["max_ocp"].get(b)), json.dumps(new["max_ocp"].get(b)))
            for b in both_bundles
            if old["max_ocp"].get(b) != new["max_ocp"].get(b)
        ),
    }
    dep = ours["olm_deprecations"]
    got = {
        "packages added": sorted(ours["packages"]["added"]),
        "packages removed": sorted(ours["packages"]["removed"]),
        "channels added": sorted((c["package"], c["channel"]) for c in ours["channels"]["added"]),
        "channels removed": sorted((c["package"], c["channel"]) for c in ours["channels"]["removed"]),
        "bundles added": sorted((b["package"], b["bundle"]) for b in ours["bundles"]["added"]),
        "bundles removed": sorted((b["package"], b["bundle"]) for b in ours["bundles"]["removed"]),
        "channel entries added": sorted((c["package"], c["channel"], c["bundle"]) for c in ours["channel_bundles"]["added"]),
        "channel entries removed": sorted((c["package"], c["channel"], c["bundle"]) for c in ours["channel_bundles"]["removed"]),
        "default channels": sorted((d["package"], d["old"], d["new"]) for d in ours["default_channels"]),
        "deprecations added": sorted((d["package"], d["schema"], d["name"], d["message"]) for d in dep["added"]),
        "deprecations removed": sorted((d["package"], d["schema"], d["name"], d["message"]) for d in dep["removed"]),
        "maxOpenShiftVersion per bundle": sorted(
            (b["package"], b["bundle"], json.dumps(b["old"]), json.dumps(b["new"])) for b in ours["max_openshift_versions"]["bundles"]
        ),
    }
    mismatches = ["%s: opm-derived %d, ours %d" % (k, len(expected[k]), len(got[k])) for k in expected if expected[k] != got[k]]
    counts = {k: len(v) for k, v in expected.items()}
    return mismatches, counts


def run_cell(name, path, op, repeat, opm, python, workdir, log, env=None, gc_off=False, new_path=None):
    """Measure one (input, op) for both tools, interleaved; returns the result dict."""
    runs = {"ours": [], "opm": []}
    digests = {"ours": set(), "opm": set()}
    failures = {"ours": [], "opm": []}
    for i in range(repeat):
        order = ("opm", "ours") if i % 2 == 0 else ("ours", "opm")
        for tool in order:
            out_file = os.path.join(workdir, "%s.out" % tool)
            argv, stdout_path = commands(tool, op, path, out_file, opm, python, gc_off, new_path)
            for _attempt in range(3):  # a failed run (e.g. the tree being edited meanwhile) is retried
                m = measure(argv, stdout_path, env if tool == "ours" else None)
                m["load1"] = os.getloadavg()[0]
                if m["rc"] == 0:
                    break
                log("  !! %s %s %s failed (rc=%s): %s" % (tool, op, name, m["rc"], m["stderr"].strip()[:500]))
                failures[tool].append(m)
            if op not in ("validate", "diff") and os.path.exists(out_file):
                digests[tool].add(_sha256(out_file))
                os.unlink(out_file)
            if m["rc"] == 0:
                del m["stderr"]
            runs[tool].append(m)
            log("  %-11s %-22s %-4s run %d: %7.2fs %8.1f MiB" % (op, name, tool, i + 1, m["wall_s"], m["rss_kb"] / 1024))
    cell = {"input": name, "path": path, "op": op, "runs": runs, "failed_runs": failures}
    if op == "diff":
        # the outputs of the last run of each tool: ours' result against what opm's two renders say
        cell["new_path"] = new_path
        # in a process of its own: parsing both renders grows this process by ~1 GiB, which every process forked
        # after it (the next measured runs) would inherit in its ru_maxrss
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            mismatches, counts = pool.apply(compare_diff, (os.path.join(workdir, "ours.out"), os.path.join(workdir, "opm.out")))
        cell["identical"] = not mismatches
        cell["mismatches"], cell["changes"] = mismatches, counts
        for suffix in (".old", ".new"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(workdir, "opm.out" + suffix))
        for m in mismatches:
            log("  !! diff %s: %s" % (name, m))
        log("  diff %s: %s; changes %s" % (name, "agrees with opm's renders" if not mismatches else "DIFFERENT", counts))
    elif op != "validate":
        cell["identical"] = len(digests["ours"]) == 1 and digests["ours"] == digests["opm"]
    else:
        cell["identical"] = None
    return summarize(cell)


def summarize(cell):
    """Fill in the medians (of successful runs), ratios and target flags of a cell from its runs."""
    runs = cell["runs"]
    for tool in ("ours", "opm"):
        good = [r for r in runs[tool] if r["rc"] == 0] or runs[tool]
        cell[tool] = {
            "wall_s": round(statistics.median(r["wall_s"] for r in good), 3),
            "rss_mib": round(statistics.median(r["rss_kb"] for r in good) / 1024, 1),
            "ok": any(r["rc"] == 0 for r in runs[tool]),
        }
    cell["wall_ratio"] = round(cell["ours"]["wall_s"] / cell["opm"]["wall_s"], 3)
    cell["rss_ratio"] = round(cell["ours"]["rss_mib"] / cell["opm"]["rss_mib"], 3)
    cell["wall_target_met"] = cell["wall_ratio"] <= WALL_TARGETS.get(cell["op"], WALL_TARGET)
    cell["rss_target_met"] = cell["rss_ratio"] <= RSS_TARGET
    return cell


# ----------------------------------------------------------------------------------------- reporting


def markdown(results):
    lines = [
        "| input | op | opm wall s | ours wall s | wall ratio | opm RSS MiB | ours RSS MiB | RSS ratio | output |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in results["cells"]:
        wall = "%.2f %s" % (c["wall_ratio"], "✅" if c["wall_target_met"] else "❌")
        rss = "%.2f %s" % (c["rss_ratio"], "✅" if c["rss_target_met"] else "❌")
        if c["identical"] is None:
            output = "both valid" if c["ours"]["ok"] and c["opm"]["ok"] else "FAILED"
        elif c["op"] == "diff":
            output = "agrees with opm's renders" if c["identical"] else "DIFFERENT"
        else:
            output = "identical" if c["identical"] else "DIFFERENT"
        lines.append(
            "| %s | %s | %.2f | %.2f | %s | %.0f | %.0f | %s | %s |"
            % (c["input"], c["op"], c["opm"]["wall_s"], c["ours"]["wall_s"], wall, c["opm"]["rss_mib"], c["ours"]["rss_mib"], rss, output)
        )
    met_w = sum(c["wall_target_met"] for c in results["cells"])
    met_r = sum(c["rss_target_met"] for c in results["cells"])
    n = len(results["cells"])
    lines.append("")
    lines.append(
        "Targets (ours/opm): wall <= %.1f (diff: <= %.1f) met in %d/%d cells, peak RSS <= %.1f met in %d/%d cells."
        % (WALL_TARGET, WALL_TARGETS["diff"], met_w, n, RSS_TARGET, met_r, n)
    )
    return "\n".join(lines) + "\n"


def environment(opm, python):
    def cmd(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False).stdout.strip()
        except OSError:
            return None

    env = machine(("plugins/module_utils/fbc",))
    env.update(
        {
            "python": cmd(
                [
                    python,
                    "-c",
                    "import sys, yaml; print(sys.version.split()[0], 'PyYAML', yaml.__version__, 'libyaml' if yaml.__with_libyaml__ else 'no-libyaml')",
                ]
            ),
            "opm": opm,
            "opm_version": cmd([opm, "version"]),
            "git_dirty_fbc": env.pop("git_dirty"),
        }
    )
    return env


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    ap.add_argument("--quick", action="store_true", help="small run: real catalogs + a ~20-package generated catalog, 1 repetition")
    ap.add_argument("--repeat", type=int, default=None, help="runs per tool and cell (default 3, quick 1)")
    ap.add_argument("--out", default=None, help="write the JSON results here")
    ap.add_argument("--markdown", default=None, help="also write the markdown table here")
    ap.add_argument("--only", default=None, help="comma-separated input names to run (default: all)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated ops (default: %(default)s)")
    ap.add_argument("--packages", type=int, default=None, help="generated catalog: packages (default 500)")
    ap.add_argument("--min-bundles", type=int, default=None, help="generated catalog: bundles (default 10000)")
    ap.add_argument("--python", default=os.path.join(REPO, ".venv", "bin", "python"), help="interpreter for our engine (default: the repo venv)")
    ap.add_argument("--report", metavar="RESULTS_JSON", default=None, help="do not measure: recompute medians and print the table of an earlier --out file")
    ap.add_argument(
        "--no-bytecode-cache", action="store_true", help="make our runs compile the sources every time (default: cache bytecode under the cache dir)"
    )
    ap.add_argument("--gc-off", action="store_true", help="experiment: run ours with Python's cyclic GC disabled (gc.disable() before any import)")
    args = ap.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            results = json.load(f)
        results["cells"] = [summarize(c) for c in results["cells"]]
        print(markdown(results))
        return
    repeat = args.repeat or (1 if args.quick else 3)
    packages = args.packages or (20 if args.quick else 500)
    min_bundles = args.min_bundles or (200 if args.quick else 10000)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    opm = find_opm()
    if not os.access(args.python, os.X_OK):
        raise SystemExit("%s not found: run `make venv` first" % args.python)
    gen_catalog.ensure_collection_link()
    manifest = gen_catalog.generate(packages, min_bundles, log=log)
    gen = "gen-%dp-%db" % (manifest["packages"], manifest["bundles"])
    inputs = [
        ("v4.12", os.path.join(SOURCE, "v4.12")),
        ("v4.16", os.path.join(SOURCE, "v4.16")),
        ("v4.20", os.path.join(SOURCE, "v4.20")),
        ("v4.20/hive-operator", os.path.join(SOURCE, "v4.20", "hive-operator")),
        ("v4.16/patterns-operator", os.path.join(SOURCE, "v4.16", "patterns-operator")),
        (gen + "-json", manifest["json"]),
        (gen + "-yaml", manifest["yaml"]),
    ]
    if args.only:
        wanted = set(args.only.split(","))
        inputs = [i for i in inputs if i[0] in wanted or i[0].split("-")[-1] in wanted]
    ops = [o for o in args.ops.split(",") if o]
    for op in ops:
        if op not in OPS:
            raise SystemExit("unknown op %r (choose from %s)" % (op, ", ".join(OPS)))

    modified = {}
    if "diff" in ops:
        for fmt in ("json", "yaml"):
            if any(i[0] == "%s-%s" % (gen, fmt) for i in inputs):
                modified["%s-%s" % (gen, fmt)] = gen_catalog.modified_copy(manifest, fmt, log=log)
    results = {
        "environment": environment(opm, args.python),
        "repeat": repeat,
        "generated": manifest,
        "targets": {"wall_ratio_max": WALL_TARGET, "rss_ratio_max": RSS_TARGET},
        "commands": {
            "opm_validate": "%s validate DIR" % shlex.quote(opm),
            "opm_render": "%s render DIR -o json|yaml > FILE" % shlex.quote(opm),
            "ours_validate": "%s -c <OURS_VALIDATE> DIR" % args.python,
            "ours_render": "%s -c <OURS_RENDER> DIR json|yaml FILE" % args.python,
            "opm_diff": "sh -c %s %s OLD NEW FILE" % (shlex.quote(OPM_DIFF), shlex.quote(opm)),
            "ours_diff": "%s -c <OURS_DIFF> OLD NEW FILE" % args.python,
            "ours_diff_code": OURS_DIFF.format(collections=gen_catalog.COLLECTIONS),
            "ours_code_prefix": GC_OFF_PREFIX if args.gc_off else "",
            "ours_validate_code": OURS_VALIDATE.format(collections=gen_catalog.COLLECTIONS),
            "ours_render_code": OURS_RENDER.format(collections=gen_catalog.COLLECTIONS),
        },
        "cells": [],
    }
    env = python_env(not args.no_bytecode_cache)
    results["environment"]["ours_bytecode_cache"] = env.get("PYTHONPYCACHEPREFIX")
    results["environment"]["ours_gc_disabled"] = args.gc_off
    # warm the bytecode cache so that no measured run pays for compiling
    subprocess.run(
        [
            args.python,
            "-c",
            "import sys; sys.path.insert(0, %r); from ansible_collections.kubeforge."
            "operators.plugins.module_utils.fbc.declcfg import load, write; from ansible_collections.kubeforge."
            "operators.plugins.module_utils.fbc.model import validate; from ansible_collections.kubeforge."
            "operators.plugins.module_utils.fbc.action import diff" % gen_catalog.COLLECTIONS,
        ],
        env=env,
        check=True,
    )
    workdir = tempfile.mkdtemp(prefix="kubeforge-bench-")
    try:
        for name, path in inputs:
            for op in ops:
                if op == "diff" and name not in modified:
                    continue  # the diff compares a generated catalog with its modified copy (gen_catalog.modified_copy)
                results["cells"].append(run_cell(name, path, op, repeat, opm, args.python, workdir, log, env, args.gc_off, modified.get(name)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results["environment"]["loadavg_end"] = os.getloadavg()
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
