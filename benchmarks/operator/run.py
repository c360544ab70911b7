"""No-op reconcile of an installed OperatorInstall (issue #11): ours against the operator-sdk scaffold way, one run.

kube-demo 0.0.1 is installed (pinned, Manual approval) in a fresh namespace by an OperatorInstall-driven run of the
olm_operator role, so its status is Ready. Then, alternating after one warm-up run each, ``ansible-playbook`` runs

- ours (``ours-reconcile.yml``): the olm_operator role with the variables operator/watches.yaml maps from the
  resource, the resource included (status written only when it changes);
- the anchor (``scaffold-reconcile.yml``): kubernetes.core.k8s for the OperatorGroup and the Subscription,
  k8s_info ``until`` the CSV succeeded, the status patched with kubernetes.core.k8s - what a scaffolded role does.

Both get the same resource as extra variables (as ansible-operator passes it). Measured: wall time of the
ansible-playbook process and the API requests it made (the testbed's audit log of the ``kubeforge-bench`` user);
the resulting Subscription, CSV and the resource's status are compared. Runs outside ansible-operator: its proxy and
ansible-runner add the same to both sides.

    .venv/bin/python benchmarks/operator/run.py [--runs 7] [--out r.json] [--markdown r.md]

A benchmark, not a test: nothing here asserts on timings. Target: ours/anchor wall time <= 1.0 (medians).
"""

import argparse
import datetime
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchlib import TESTS, brief_requests, ensure_collection_link, log, machine, median, requests_since, write_results  # noqa: E402

sys.path.insert(0, TESTS)
_spec = importlib.util.spec_from_file_location("olm_bench", HERE.parent / "olm" / "run.py")
olm_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(olm_bench)

GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"
CRD_DIR = HERE.parent.parent / "operator" / "config" / "crd"
PLAYBOOKS = {"ours": str(HERE / "ours-reconcile.yml"), "anchor": str(HERE / "scaffold-reconcile.yml")}


def ensure_crds(cluster):
    import yaml
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    ext = client.ApiextensionsV1Api(cluster.api)
    for path in sorted(CRD_DIR.glob("*.yaml")):
        try:
            ext.create_custom_resource_definition(yaml.safe_load(path.read_text()))
        except ApiException as exc:
            if exc.status != 409:
                raise


def resource(cluster, namespace):
    return cluster.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "operatorinstalls", "kube-demo")


def outcome(cluster, namespace):
    state = olm_bench.comparable(cluster.install_state(namespace))
    status = resource(cluster, namespace).get("status") or {}
    return {"install": state, "installedCSV": status.get("installedCSV")}


def bench(bed, cluster, runs, workdir):
    env = olm_bench.ansible_env(os.path.join(workdir, "tmp"))
    ns = cluster.new_namespace("reconcile")
    cluster.catalog(ns)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "OperatorInstall",
        "metadata": {"name": "kube-demo", "namespace": ns},
        "spec": {"package": "kube-demo", "catalog": olm_bench.CATALOG, "channel": "stable", "version": "0.0.1"},
    }
    cluster.custom.create_namespaced_custom_object(GROUP, VERSION, ns, "operatorinstalls", body)
    extra = {"testbed_kubeconfig": bed.state["bench_kubeconfig"], "resource": resource(cluster, ns)}
    first = olm_bench.run_playbook(PLAYBOOKS["ours"], extra, workdir, env)
    if first["rc"] != 0:
        raise SystemExit("install failed: %s" % first.get("output"))
    cluster.wait_subscription_settled(ns)
    extra["resource"] = resource(cluster, ns)
    measured, outcomes = {"ours": [], "anchor": []}, {"ours": [], "anchor": []}
    for tool in ("ours", "anchor"):  # warm-up
        olm_bench.run_playbook(PLAYBOOKS[tool], extra, workdir, env)
    for i in range(runs):
        for tool in ("ours", "anchor") if i % 2 == 0 else ("anchor", "ours"):
            offset = bed.audit_offset()
            run = olm_bench.run_playbook(PLAYBOOKS[tool], extra, workdir, env)
            requests, foreign, _timing = requests_since(bed, offset, ns)
            run.update({"requests": len(requests), "request_list": brief_requests(requests, ns), "foreign_requests": foreign})
            measured[tool].append(run)
            outcomes[tool].append(outcome(cluster, ns))
            log("  reconcile %-6s %6.2fs %3d requests%s" % (tool, run["wall_s"], len(requests), "" if run["rc"] == 0 else "  FAILED"))
    medians = {key: {tool: median([r[key] for r in measured[tool]]) for tool in measured} for key in ("wall_s", "cpu_s", "requests")}
    states = {json.dumps(o, sort_keys=True) for tool in outcomes for o in outcomes[tool]}
    return {
        "runs": runs,
        "namespace": ns,
        "measured": measured,
        "medians": medians,
        "wall_ratio": medians["wall_s"]["ours"] / medians["wall_s"]["anchor"],
        "requests_ours": measured["ours"][-1]["request_list"],
        "requests_anchor": measured["anchor"][-1]["request_list"],
        "all_ok": all(r["rc"] == 0 for tool in measured for r in measured[tool]),
        "same_outcome": len(states) == 1,
        "outcome": json.loads(sorted(states)[0]),
    }


def markdown(results):
    r, env = results["reconcile"], results["environment"]
    lines = [
        "## No-op reconcile of an installed OperatorInstall (%s, %s CPUs, git %s)\n" % (env["date_utc"], env["cpus"], env["git_head"]),
        "| | ours (olm_operator role) | anchor (scaffold: kubernetes.core tasks) | ours / anchor |",
        "|---|---|---|---|",
        "| wall time, median of %d (s) | %.2f | %.2f | **%.2f** |"
        % (r["runs"], r["medians"]["wall_s"]["ours"], r["medians"]["wall_s"]["anchor"], r["wall_ratio"]),
        "| CPU time, median (s) | %.2f | %.2f | %.2f |"
        % (r["medians"]["cpu_s"]["ours"], r["medians"]["cpu_s"]["anchor"], r["medians"]["cpu_s"]["ours"] / r["medians"]["cpu_s"]["anchor"]),
        "| API requests, median | %d | %d | |" % (r["medians"]["requests"]["ours"], r["medians"]["requests"]["anchor"]),
        "",
        "Target ours/anchor <= 1.0: %s. All runs succeeded: %s. Same cluster state and status after every run: %s."
        % ("met" if r["wall_ratio"] <= 1.0 else "**missed**", r["all_ok"], r["same_outcome"]),
        "",
        "Requests of the last run, ours: %s" % ", ".join(" ".join(x) if isinstance(x, list) else str(x) for x in r["requests_ours"]),
        "",
        "Requests of the last run, anchor: %s" % ", ".join(" ".join(x) if isinstance(x, list) else str(x) for x in r["requests_anchor"]),
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--runs", type=int, default=7, help="alternating runs per side (default 7)")
    ap.add_argument("--out", help="write all raw results as JSON here")
    ap.add_argument("--markdown", help="write the Markdown table here")
    args = ap.parse_args()

    from testbed import Testbed

    ensure_collection_link()
    bed = Testbed()
    if not bed.is_running():
        log("testbed not running: bringing it up")
        bed.up()
    cluster = olm_bench.Cluster(bed)
    ensure_crds(cluster)
    env = machine(("plugins", "roles"))
    env["date_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with tempfile.TemporaryDirectory(prefix="kf-bench-operator-") as workdir:
        try:
            results = {"environment": env, "reconcile": bench(bed, cluster, args.runs, workdir)}
        finally:
            cluster.delete_namespaces()
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
