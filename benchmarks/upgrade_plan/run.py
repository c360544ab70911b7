"""Upgrade-plan benchmark (issue #33 "Speed"): kubeforge.operators.olm_upgrade_plan against what a user does today
(kubernetes.core.k8s_info of the CSVs and a Jinja loop over their ``olm.maxOpenShiftVersion``), on the testbed, in
one run.

Target (issue #33): the plan for a cluster with 50 installed operators against a 500-package catalog in under 5 s,
and a request count that does not grow with the catalog (one list per kind).

Set-up, not timed (admin kubeconfig, not in the audit log): ``--operators`` (default 50) installed operators created
**directly through the API** in ``--namespaces`` (default 10) fresh namespaces - per operator a
ClusterServiceVersion named after a bundle of the generated catalog's default channel (``gen_catalog.generate``:
the first N packages of the 500-package catalog, the same names as the small catalog's), with the
``operatorframework.io/properties`` annotation carrying ``olm.package`` and, for 4 operators out of 5, an
``olm.maxOpenShiftVersion`` (4.18, 4.20, 4.21, 4.22 in turn), and a Subscription (package, default channel, source
``bench-target``) whose ``status.installedCSV`` names the CSV. Nothing is installed: no OperatorGroup, no catalog, no
deployment - the module and the anchor only read these objects (OLM marks the CSVs Failed, which neither reads).
Before every run the Subscriptions' ``installedCSV`` is checked and written again if OLM cleared it.

Measured, alternating, ``--runs`` times (default 3) after one warm-up run each:

- ``ours`` / ``anchor``: ``ansible-playbook ours.yml`` (one ``olm_upgrade_plan`` task with the generated
  500-package catalog as a directory, target ``--target``, default 4.21) against ``ansible-playbook anchor.yml``
  (``k8s_info`` of the CSVs, ``set_fact`` in a loop, no catalog); each ends by printing its blockers, which are
  compared;
- ``module-500`` / ``module-5``: ``olm_upgrade_plan`` as one module process (``python -m``, as Ansible runs it
  locally) with the 500-package and a 5-package catalog: the issue's wall-time target and the requests, which must
  be the same for both catalogs.

Requests are the bench user's, from the testbed's audit log (``Testbed().audit_requests``).

    .venv/bin/python benchmarks/upgrade_plan/run.py [--operators 50] [--runs 3] [--out r.json] [--markdown r.md]
    .venv/bin/python benchmarks/upgrade_plan/run.py --report r.json

This is a benchmark, not a test: nothing here asserts on timings. The namespaces are deleted at the end.
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import (  # noqa: E402
    COLLECTIONS,
    TESTS,
    brief_requests,
    ensure_collection_link,
    fmt,
    is_discovery,
    log,
    machine,
    mark,
    median,
    module_env,
    requests_since,
    run_module_subprocess_timed,
    site_packages,
    timed_run,
    warm_discovery,
    write_results,
)

sys.path.insert(0, TESTS)  # the testbed package

GROUP, VERSION = "operators.coreos.com", "v1alpha1"
SOURCE, SOURCE_NAMESPACE = "bench-target", "olm"
MODULE = "ansible_collections.kubeforge.operators.plugins.modules.olm_upgrade_plan"
PLAYBOOKS = {"ours": os.path.join(HERE, "ours.yml"), "anchor": os.path.join(HERE, "anchor.yml")}
MAXIMA = (None, "4.18", "4.20", "4.21", "4.22")  # per operator in turn
WALL_TARGET_S = 5.0
# No namespace of ours is ever named in a request (every list is cluster-wide): requests into a namespace are
# someone else's.
NO_NAMESPACE = "bench-upgrade-plan-none"
DISCOVERY_KINDS = [("ClusterServiceVersion", "operators.coreos.com/v1alpha1"), ("Subscription", "operators.coreos.com/v1alpha1")]


def ansible_env(tmpdir):
    env = module_env(tmpdir)
    env.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([COLLECTIONS] + site_packages()),
            "ANSIBLE_LOCAL_TEMP": os.path.join(tmpdir, "ansible-local"),
            "ANSIBLE_REMOTE_TEMP": os.path.join(tmpdir, "ansible-remote"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
            "ANSIBLE_STDOUT_CALLBACK": "json",
        }
    )
    env.pop("PYTHONPYCACHEPREFIX", None)  # AnsiballZ payloads are never bytecode-cached
    env.pop("PYTHONPATH", None)
    return env


# ------------------------------------------------------------------------------------------------ set-up


def catalog_operators(catalog_dir, count):
    """(package, default channel, bundle name, version) of the first ``count`` packages: the default channel's first
    entry, read from each package's own directory (the whole catalog is never loaded here)."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load

    chosen = []
    # gen_catalog names packages <template>-x<NNNN>: the first ones are also the small catalog's
    for name in sorted(os.listdir(catalog_dir), key=lambda n: n.rsplit("-x", 1)[-1])[:count]:
        cfg = load(os.path.join(catalog_dir, name))
        pkg = cfg.packages[0]
        channel = next(c for c in cfg.channels if c["name"] == pkg["defaultChannel"])
        bundle_name = channel["entries"][0]["name"]
        bundle = next(b for b in cfg.bundles if b["name"] == bundle_name)
        version = next(p["value"]["version"] for p in bundle["properties"] if p["type"] == "olm.package")
        chosen.append((pkg["name"], channel["name"], bundle_name, version))
    if len(chosen) < count:
        raise SystemExit("the catalog %s has %d packages, %d wanted" % (catalog_dir, len(chosen), count))
    return chosen


class Cluster:
    """The installed operators, made and checked through the admin kubeconfig (not audited)."""

    def __init__(self, bed):
        from kubernetes import client
        from testbed.kube import api_client

        self.api = api_client(bed.kubeconfig, pool=8)
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.namespaces = []
        self.subscriptions = []  # (namespace, name, installedCSV)

    def create(self, operators, namespaces, target):
        tag = os.urandom(3).hex()
        self.namespaces = ["bench-upgrade-plan-%s-%02d" % (tag, i) for i in range(namespaces)]
        for name in self.namespaces:
            self.core.create_namespace({"metadata": {"name": name, "labels": {"kubeforge.io/benchmark": "upgrade-plan"}}})
        expected = set()
        for i, (package, channel, bundle, version) in enumerate(operators):
            ns = self.namespaces[i % namespaces]
            maximum = MAXIMA[i % len(MAXIMA)]
            properties = [{"type": "olm.package", "value": {"packageName": package, "version": version}}]
            if maximum:
                properties.append({"type": "olm.maxOpenShiftVersion", "value": maximum})
                if tuple(int(x) for x in maximum.split(".")) < tuple(int(x) for x in target.split(".")[:2]):
                    expected.add("%s/%s" % (ns, bundle))
            csv = {
                "apiVersion": "%s/%s" % (GROUP, VERSION),
                "kind": "ClusterServiceVersion",
                "metadata": {"name": bundle, "annotations": {"operatorframework.io/properties": json.dumps({"properties": properties})}},
                "spec": {"displayName": package, "version": version, "install": {"strategy": "deployment", "spec": {"deployments": []}}},
            }
            self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, "clusterserviceversions", csv)
            sub = {
                "apiVersion": "%s/%s" % (GROUP, VERSION),
                "kind": "Subscription",
                "metadata": {"name": package},
                "spec": {"name": package, "channel": channel, "source": SOURCE, "sourceNamespace": SOURCE_NAMESPACE, "installPlanApproval": "Manual"},
            }
            self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, "subscriptions", sub)
            self.subscriptions.append((ns, package, bundle))
        self.ensure_status()
        return expected

    def ensure_status(self):
        """Write ``status.installedCSV`` where it is missing (new, or cleared by OLM); returns how many were written."""
        written = 0
        for ns, name, csv in self.subscriptions:
            sub = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, "subscriptions", name)
            status = sub.get("status") or {}
            if status.get("installedCSV") == csv and status.get("currentCSV") == csv:
                continue
            status.update(
                installedCSV=csv, currentCSV=csv, state="AtLatestKnown", lastUpdated=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            )
            sub["status"] = status
            self.custom.replace_namespaced_custom_object_status(GROUP, VERSION, ns, "subscriptions", name, sub)
            written += 1
        return written

    def delete(self):
        from kubernetes.client.rest import ApiException

        for name in self.namespaces:
            try:
                self.core.delete_namespace(name)
            except ApiException as exc:
                if exc.status != 404:
                    log("!! deleting namespace %s: %s" % (name, exc.reason))
        self.namespaces = []


# --------------------------------------------------------------------------------------------- measuring


def run_playbook(playbook, extra_vars, workdir, env, timeout=900):
    """``ansible-playbook`` timed; ``blockers`` from the last task's message (json stdout callback)."""
    vars_file = os.path.join(workdir, "vars.json")
    with open(vars_file, "w") as f:
        json.dump(dict(extra_vars, ansible_python_interpreter=sys.executable), f)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@" + vars_file, playbook]
    timed = timed_run(argv, env, timeout)
    stdout, stderr = timed.pop("stdout"), timed.pop("stderr")
    timed["blockers"] = None
    try:
        tasks = json.loads(stdout)["plays"][0]["tasks"]
        timed["blockers"] = sorted(tasks[-1]["hosts"]["localhost"]["msg"])
        timed["tasks"] = [
            {"name": t["task"]["name"], "start": t["task"]["duration"]["start"], "end": t["task"]["duration"]["end"]}
            for t in tasks
            if t["task"].get("duration")
        ]
    except (ValueError, KeyError, IndexError, TypeError):
        pass
    if timed["rc"] != 0 or timed["blockers"] is None:
        timed["output"] = (stdout[-3000:] + stderr[-2000:]).strip()
    return timed


def by_resource(requests):
    counts = collections.Counter()
    for verb, uri, _code in requests:
        path = uri.split("?")[0]
        counts["%s discovery" % verb if is_discovery(uri) else "%s %s" % (verb, path.rstrip("/").rsplit("/", 1)[-1])] += 1
    return dict(sorted(counts.items()))


def measure(bed, cluster, tool, args, catalogs, workdir, envs):
    rewritten = cluster.ensure_status()
    run_dir = tempfile.mkdtemp(prefix="%s-" % tool, dir=workdir)
    offset = bed.audit_offset()
    if tool in ("ours", "anchor"):
        extra = {"bench_kubeconfig": bed.state["bench_kubeconfig"], "target_version": args.target, "catalog_source": SOURCE, "catalog_dir": catalogs[500]}
        run = run_playbook(PLAYBOOKS[tool], extra, run_dir, envs["play"])
    else:
        size = int(tool.split("-")[1])
        params = {"kubeconfig": bed.state["bench_kubeconfig"], "openshift_version": args.target, "catalogs": [{"source": SOURCE, "dir": catalogs[size]}]}
        run = run_module_subprocess_timed(MODULE, params, run_dir, envs["module"], sys.executable)
        result = run.pop("result")
        run["blockers"] = sorted(result.get("blockers") or []) if not result.get("failed") else None
        run["verdict"] = result.get("verdict")
        run["operators"] = len(result.get("operators") or [])
        run["actions"] = dict(collections.Counter((op.get("action") or {}).get("kind") for op in result.get("operators") or []))
        if result.get("failed"):
            run["output"] = result.get("msg")
    ours, foreign, _timing = requests_since(bed, offset, NO_NAMESPACE)
    run.update(
        requests=brief_requests(ours, NO_NAMESPACE),
        count=len(ours),
        by_resource=by_resource(ours),
        foreign=len(foreign),
        status_rewritten=rewritten,
        ok=run["rc"] == 0 and run.get("blockers") is not None,
    )
    shutil.rmtree(run_dir, ignore_errors=True)
    return run


# ------------------------------------------------------------------------------------------------ report


TOOLS = ("ours", "anchor", "module-500", "module-5")
LABELS = {
    "ours": "ours: `ansible-playbook ours.yml` (olm_upgrade_plan, 500-package catalog)",
    "anchor": "anchor: `ansible-playbook anchor.yml` (k8s_info + set_fact loop, no catalog)",
    "module-500": "olm_upgrade_plan module process, 500-package catalog",
    "module-5": "olm_upgrade_plan module process, 5-package catalog",
}


def summarize(results):
    measured = results["measured"]
    med = {tool: {key: median([r[key] for r in measured[tool]]) for key in ("wall_s", "cpu_s", "maxrss_mib", "count")} for tool in TOOLS}
    blockers = {tool: sorted({json.dumps(r["blockers"]) for r in measured[tool]}) for tool in TOOLS}
    requests = {tool: sorted({json.dumps(r["by_resource"], sort_keys=True) for r in measured[tool]}) for tool in TOOLS}
    expected = json.dumps(sorted(results["expected_blockers"]))
    return {
        "medians": med,
        "wall_ratio": med["ours"]["wall_s"] / med["anchor"]["wall_s"] if med["ours"]["wall_s"] and med["anchor"]["wall_s"] else None,
        "pair_ratios": [round(o["wall_s"] / a["wall_s"], 3) for o, a in zip(measured["ours"], measured["anchor"])],
        "same_blockers": all(b == [expected] for b in blockers.values()),
        "blocker_sets": blockers,
        "requests_same_for_both_catalogs": requests["module-500"] == requests["module-5"] and len(requests["module-500"]) == 1,
        "request_sets": requests,
        "all_ok": all(r["ok"] for tool in TOOLS for r in measured[tool]),
    }


def markdown(results):
    env, s = results["environment"], results["summary"]
    m = s["medians"]
    lines = [
        "## Upgrade-plan benchmark (%s, %s CPUs, load average %.1f at the start, %.1f at the end; git %s%s)\n"
        % (
            env["date_utc"],
            env["cpus"],
            env["loadavg_start"][0],
            env.get("loadavg_end", [0])[0],
            env["git_head"],
            " + uncommitted plugins/" if env["git_dirty"] else "",
        ),
        "%d installed operators (CSVs + Subscriptions created through the API, %d declaring olm.maxOpenShiftVersion) in %d "
        "namespaces, target OpenShift %s, target catalog %s (%s packages, %s bundles, JSON directory); %d alternating runs "
        "per side after one warm-up run each; medians."
        % (
            results["operators"],
            results["declaring"],
            results["namespaces"],
            results["target"],
            results["catalog_key"],
            results["catalog_packages"],
            results["catalog_bundles"],
            results["runs"],
        ),
        "",
        "| | wall s | CPU s | peak RSS MiB (largest process) | API requests | requests by kind |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for tool in TOOLS:
        last = results["measured"][tool][-1]
        lines.append(
            "| %s | %s | %s | %s | %s | %s |"
            % (
                LABELS[tool],
                fmt(m[tool]["wall_s"]),
                fmt(m[tool]["cpu_s"]),
                fmt(m[tool]["maxrss_mib"], 0),
                fmt(m[tool]["count"], 0),
                ", ".join("%s ×%d" % kv for kv in last["by_resource"].items()),
            )
        )
    lines += [
        "",
        "ours/anchor (playbook wall time): **%s** (pairs %s). The module with the 500-package catalog: **%s s** %s (target < %.0f s). "
        "Requests with the 5- and the 500-package catalog: **%s** %s. Blockers: %s (%d CSVs of %d)."
        % (
            fmt(s["wall_ratio"]),
            ", ".join(fmt(x) for x in s["pair_ratios"]),
            fmt(m["module-500"]["wall_s"]),
            mark(m["module-500"]["wall_s"] is not None and m["module-500"]["wall_s"] < WALL_TARGET_S),
            WALL_TARGET_S,
            "the same" if s["requests_same_for_both_catalogs"] else "different",
            mark(s["requests_same_for_both_catalogs"]),
            "the same set in every run of every side, the expected one" if s["same_blockers"] else "**differ** (see the JSON)",
            len(results["expected_blockers"]),
            results["operators"],
        ),
        "",
        "| run | %s |" % " | ".join(TOOLS),
        "|---|%s|" % "|".join("---:" for _tool in TOOLS),
    ]
    for i in range(results["runs"]):
        lines.append(
            "| %d | %s |"
            % (
                i + 1,
                " | ".join(
                    "%s (%d req)%s"
                    % (fmt(results["measured"][t][i]["wall_s"]), results["measured"][t][i]["count"], "" if results["measured"][t][i]["ok"] else " FAILED")
                    for t in TOOLS
                ),
            )
        )
    last = results["measured"]["module-500"][-1]
    lines += ["", "module-500, last run: %s; actions %s." % ("; ".join(last["requests"]), json.dumps(last.get("actions"))), ""]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--operators", type=int, default=50, help="installed operators (default 50)")
    ap.add_argument("--namespaces", type=int, default=10, help="namespaces they are spread over (default 10)")
    ap.add_argument("--packages", type=int, default=500, help="packages of the big target catalog (default 500)")
    ap.add_argument("--target", default="4.21", help="the target OpenShift version (default 4.21)")
    ap.add_argument("--runs", type=int, default=3, help="alternating runs per side (default 3)")
    ap.add_argument("--out", help="write all raw results as JSON here")
    ap.add_argument("--markdown", help="write the Markdown tables here")
    ap.add_argument("--keep", action="store_true", help="keep the namespaces (default: delete them at the end)")
    ap.add_argument("--report", help="re-print the tables of a JSON written by --out and exit")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            print(markdown(json.load(f)))
        return

    import gen_catalog
    from testbed import Testbed

    ensure_collection_link()
    big = gen_catalog.generate(packages=args.packages, min_bundles=1 if args.packages < 500 else 10000, log=log)
    small = gen_catalog.generate(packages=5, min_bundles=1, log=log)
    catalogs = {500: big["json"], 5: small["json"]}
    operators = catalog_operators(big["json"], args.operators)

    bed = Testbed()
    if not bed.is_running():
        log("testbed not running: bringing it up")
        bed.up()
    else:
        log("reusing the running testbed (%s)" % bed.kubeconfig)
    workdir = tempfile.mkdtemp(prefix="kubeforge-bench-upgrade-plan-")
    tmp = os.path.join(workdir, "tmp")
    os.makedirs(tmp)
    envs = {"module": module_env(tmp), "play": ansible_env(tmp)}
    warm_discovery(bed.kubeconfig, envs["module"], sys.executable, DISCOVERY_KINDS)
    cluster = Cluster(bed)
    env = machine(("plugins",))
    env.update(date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), testbed_versions=bed.state.get("versions"))
    results = {
        "environment": env,
        "operators": args.operators,
        "declaring": sum(1 for i in range(args.operators) if MAXIMA[i % len(MAXIMA)]),
        "namespaces": args.namespaces,
        "target": args.target,
        "catalog_key": big["key"],
        "catalog_packages": big["packages"],
        "catalog_bundles": big["bundles"],
        "small_catalog_key": small["key"],
        "runs": args.runs,
        "order": [],
        "measured": {tool: [] for tool in TOOLS},
    }
    try:
        started = time.monotonic()
        results["expected_blockers"] = sorted(cluster.create(operators, args.namespaces, args.target))
        log("%d operators created in %.1f s; %d should block %s" % (args.operators, time.monotonic() - started, len(results["expected_blockers"]), args.target))
        for tool in TOOLS:
            warm = measure(bed, cluster, tool, args, catalogs, workdir, envs)
            log(
                "  warm-up %-10s %6.2fs rc=%s requests %d%s"
                % (tool, warm["wall_s"], warm["rc"], warm["count"], "" if warm["ok"] else "  FAILED: %s" % warm.get("output"))
            )
        for i in range(args.runs):
            order = TOOLS if i % 2 == 0 else tuple(reversed(TOOLS))
            results["order"].append(order)
            for tool in order:
                run = measure(bed, cluster, tool, args, catalogs, workdir, envs)
                results["measured"][tool].append(run)
                log(
                    "run %d %-10s %6.2fs rc=%s requests %d blockers %s%s"
                    % (i + 1, tool, run["wall_s"], run["rc"], run["count"], len(run["blockers"] or []), "" if run["ok"] else "  FAILED: %s" % run.get("output"))
                )
    finally:
        if not args.keep:
            cluster.delete()
        cluster.api.close()
        shutil.rmtree(workdir, ignore_errors=True)
    results["environment"]["loadavg_end"] = os.getloadavg()
    results["summary"] = summarize(results)
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
