"""Command line: python -m testbed {build,up,down,status,env,ansible-vars,scale,members,members-stop,openshift-member,
serve-catalog,operator-start,operator-stop} (run with PYTHONPATH=tests)."""

import argparse
import json
import sys
import time
from pathlib import Path

from testbed import cluster


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed", description="kubeforge.operators local testbed")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build (or reuse) every binary from Go modules")
    up = sub.add_parser("up", help="bring the testbed up (building first if needed); reuses a running one")
    up.add_argument("--nodes", type=int, default=3, help="number of fake KWOK nodes (default 3)")
    up.add_argument("--without-scc", action="store_true", help="skip OpenShift's SecurityContextConstraints CRD (and so SCC admission)")
    up.add_argument("--without-scc-admission", action="store_true", help="do not enforce SCCs (OpenShift's SCC admission webhook runs by default)")
    up.add_argument("--without-real-node", action="store_true", help="no real kubelet node (one joins by default; it needs root, containerd, runc)")
    up.add_argument("--olmv1", action="store_true", help="also start OLM v1 (catalogd, operator-controller); on a running testbed, start just that")
    up.add_argument("--clusters", type=int, default=0, help="also start this many member clusters (member-1..N, see members.py)")
    up.add_argument("--member-nodes", type=int, default=3, help="fake KWOK nodes of each member cluster (default 3)")
    down = sub.add_parser("down", help="stop every testbed process and free its ports")
    down.add_argument("--purge-logs", action="store_true", help="also delete the log files")
    sub.add_parser("status", help="print the testbed status as JSON (exit 1 when not running)")
    sub.add_parser("env", help="print `export KUBECONFIG=...` for a shell")
    sub.add_parser("ansible-vars", help="print the path of the running testbed's extra-vars file for ansible-playbook -e @FILE")
    scale = sub.add_parser("scale", help="create more fake nodes on the running testbed")
    scale.add_argument("nodes", type=int)
    members = sub.add_parser("members", help="start member clusters member-1..N beside the running testbed; print their facts")
    members.add_argument("count", type=int)
    members.add_argument("--nodes", type=int, default=3, help="fake KWOK nodes of each member (default 3)")
    members.add_argument("--olmv1", action="store_true", help="also start OLM v1 in each member")
    sub.add_parser("members-stop", help="stop every member cluster")
    ocp = sub.add_parser("openshift-member", help="start a member OLM takes for OpenShift (ClusterOperator operator-lifecycle-manager); print its facts")
    ocp.add_argument("--name", default="", help="member name (default ocp-1)")
    ocp.add_argument("--release", default="4.20.0", help="OpenShift release OLM is told (RELEASE_VERSION, default 4.20.0)")
    ocp.add_argument("--nodes", type=int, default=1, help="fake KWOK nodes (default 1)")
    ocp.add_argument("--stop", action="store_true", help="stop that member instead")
    serve = sub.add_parser("serve-catalog", help="serve a File-Based Catalog directory with a second opm serve; print its address")
    serve.add_argument("directory")
    operator = sub.add_parser("operator-start", help="run ansible-operator on a watches file as a ServiceAccount (see operator_runtime.py)")
    operator.add_argument("watches_file")
    operator.add_argument("service_account", help="namespace/name")
    operator.add_argument("--collections-path", required=True, help="ANSIBLE_COLLECTIONS_PATH of the operator's runs")
    sub.add_parser("operator-stop", help="stop ansible-operator and the opm serve of serve-catalog")
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            started = time.monotonic()
            path = cluster.build()
            print(f"binaries in {path} ({time.monotonic() - started:.0f}s)")
            return 0
        testbed = cluster.Testbed()
        if args.command == "up":
            status = testbed.up(
                nodes=args.nodes,
                with_scc=not args.without_scc,
                olmv1=args.olmv1,
                scc_admission=not args.without_scc_admission,
                real_node=not args.without_real_node,
            )
            if args.clusters:
                testbed.ensure_members(args.clusters, nodes=args.member_nodes, olmv1=args.olmv1)
                status = testbed.status()
            print(json.dumps(status, indent=2))
            print(f"export KUBECONFIG={testbed.kubeconfig}")
            return 0
        if args.command == "members":
            print(json.dumps(testbed.ensure_members(args.count, nodes=args.nodes, olmv1=args.olmv1), indent=2))
            return 0
        if args.command == "members-stop":
            testbed.stop_members()
            return 0
        if args.command == "openshift-member":
            if args.stop:
                from testbed.members import OPENSHIFT_MEMBER

                testbed.stop_member(args.name or OPENSHIFT_MEMBER)
                return 0
            print(json.dumps(testbed.ensure_openshift_member(args.name, release=args.release, nodes=args.nodes), indent=2))
            return 0
        if args.command == "down":
            testbed.down(keep_logs=not args.purge_logs)
            print("testbed stopped")
            return 0
        if args.command == "status":
            status = testbed.status()
            print(json.dumps(status, indent=2))
            return 0 if status["running"] else 1
        if args.command == "env":
            print(f"export KUBECONFIG={testbed.kubeconfig}")
            return 0
        if args.command == "ansible-vars":
            if not testbed.is_running():
                raise cluster.TestbedError("the testbed is not running: run `make testbed-up`")
            print(testbed.run_dir / "ansible-vars.json")
            return 0
        if args.command == "scale":
            testbed.scale_nodes(args.nodes)
            return 0
        if args.command == "serve-catalog":
            print(testbed.serve_catalog(Path(args.directory)))
            return 0
        if args.command == "operator-start":
            namespace, _sep, name = args.service_account.partition("/")
            record = testbed.start_operator(Path(args.watches_file), (namespace, name), args.collections_path)
            print(f"ansible-operator running as {args.service_account} (pid {record['pid']}, log {record['log']})")
            return 0
        if args.command == "operator-stop":
            testbed.stop_operator()
            testbed.stop_catalog()
            return 0
    except cluster.TestbedError as exc:
        print(f"testbed: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
