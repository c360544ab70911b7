"""The testbed's real node: a kubelet with containerd and runc that runs pods on the testbed's own bridge, reachable
only through authenticated kubelet calls, with a host firewall guard in front of every simulated address."""

import ipaddress
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kubernetes import client
from lib.polling import poll_until
from testbed import config, realnode

pytestmark = pytest.mark.testbed


def run_pod(core, namespace, real_node, name, image):
    body = {
        "metadata": {"name": name},
        "spec": {
            "nodeSelector": real_node["node_selector"],
            "tolerations": real_node["tolerations"],
            "restartPolicy": "Always",
            "containers": [{"name": "main", "image": image}],
        },
    }
    core.create_namespaced_pod(namespace, body)


def wait_running(core, namespace, name):
    return poll_until(
        lambda: core.read_namespaced_pod(name, namespace),
        60,
        0.5,
        f"pod {name} running",
        until=lambda pod: pod.status.phase == "Running",
        show=lambda pod: pod.status,
    )


def pod_processes(uid):
    """PIDs of the host processes in the pod's cgroups (its sandbox and its containers)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if f"pod{uid}" in (proc / "cgroup").read_text():
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def routes(pid):
    """(destination, gateway, mask) of every IPv4 route in the network namespace of `pid`, sorted."""
    found = []
    for line in Path(f"/proc/{pid}/net/route").read_text().splitlines()[1:]:
        fields = line.split()
        found.append(tuple(socket.inet_ntoa(int(x, 16).to_bytes(4, "little")) for x in (fields[1], fields[2], fields[7])))
    return sorted(found)


def test_node_is_a_real_kubelet(api, real_node):
    node = client.CoreV1Api(api).read_node(real_node["name"])
    assert node.status.node_info.container_runtime_version.startswith("containerd://"), node.status.node_info
    assert node.status.node_info.kubelet_version == "v1.35.4"
    assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
    assert [(t.key, t.effect) for t in node.spec.taints] == [(realnode.LABEL, "NoSchedule")]
    assert {a.type: a.address for a in node.status.addresses}["InternalIP"] == realnode.BRIDGE_ADDRESS
    assert node.metadata.labels[realnode.LABEL] == "true" and "type" not in node.metadata.labels


def test_pod_gets_only_the_bridge(api, namespace, real_node):
    core = client.CoreV1Api(api)
    run_pod(core, namespace, real_node, "sleeper", real_node["images"]["pause"])
    pod = wait_running(core, namespace, "sleeper")
    assert ipaddress.ip_address(pod.status.pod_ip) in ipaddress.ip_network(real_node["pod_subnet"])
    assert pod.spec.node_name == real_node["name"]
    assert pod.metadata.annotations["openshift.io/scc"], pod.metadata.annotations
    pids = pod_processes(pod.metadata.uid)
    assert pids, "no host process in the pod's cgroups"
    # No default route and no masquerade: the pod reaches the bridge's subnet, and the Service CIDR through the host's
    # bridge address (where kube-proxy translates it), nothing else.
    assert routes(pids[-1]) == [("10.0.0.0", realnode.BRIDGE_ADDRESS, "255.255.255.0"), ("10.88.0.0", "0.0.0.0", "255.255.255.0")]
    with open("/proc/sys/net/ipv4/ip_forward") as handle:
        assert handle.read().strip() == "0"


def test_logs_through_the_api_server_and_no_anonymous_kubelet(api, namespace, real_node):
    core = client.CoreV1Api(api)
    run_pod(core, namespace, real_node, "crasher", real_node["images"]["crash"])
    pod = poll_until(
        lambda: core.read_namespaced_pod("crasher", namespace),
        60,
        0.5,
        "the crash container to have run",
        until=lambda p: any(c.restart_count >= 1 or c.state.terminated for c in p.status.container_statuses or []),
        show=lambda p: p.status.container_statuses,
    )
    status = pod.status.container_statuses[0]
    # The kubelet's shape of a crash loop: terminated/Error between restarts (the simulation said waiting/CrashLoopBackOff).
    terminated = status.state.terminated or status.last_state.terminated
    assert terminated.exit_code == 1 and terminated.reason == "Error", status
    # kubectl logs: the API server calls the kubelet with its client certificate.
    assert "crashes on purpose" in core.read_namespaced_pod_log("crasher", namespace, previous=status.state.terminated is None)
    node = core.read_node(real_node["name"])
    port = node.status.daemon_endpoints.kubelet_endpoint.port
    context = ssl.create_default_context(cafile=str(Path(config.RUN_DIR) / "pki" / "ca.crt"))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"https://{realnode.BRIDGE_ADDRESS}:{port}/pods", context=context, timeout=10)  # noqa: S310
    assert refused.value.code == 401


def guard_drops():
    """{destination: dropped packets} of the guard chain's DROP rules."""
    out = subprocess.run(["iptables", "-t", "filter", "-L", realnode.GUARD_CHAIN, "-n", "-v", "-x"], capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in out.splitlines()[2:]:
        fields = line.split()
        if fields[2] == "DROP" and fields[8] != "0.0.0.0/0":
            counts[fields[8]] = int(fields[0])
    return counts


def test_guard_drops_simulated_addresses(real_node):
    output = subprocess.run(["iptables", "-t", "filter", "-S", "OUTPUT"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert f"-A OUTPUT -j {realnode.GUARD_CHAIN}" in output
    before = guard_drops()
    for address in ("10.244.3.7", "10.0.0.77"):  # a simulated pod's address, a Service address nothing translates
        with socket.socket() as sock:
            sock.settimeout(1)
            assert sock.connect_ex((address, 80)) != 0
    after = guard_drops()
    assert after[config.POD_CIDR] > before[config.POD_CIDR], (before, after)
    assert after[config.SERVICE_CIDR] > before[config.SERVICE_CIDR], (before, after)


def test_an_image_that_must_fail_to_pull_is_refused_on_the_loopback(api, namespace, real_node):
    """example.invalid's pulls go to 127.0.0.1:1 (containerd's certs.d/example.invalid/hosts.toml): refused at once,
    and the name is never looked up through the machine's resolver."""
    core = client.CoreV1Api(api)
    run_pod(core, namespace, real_node, "unpullable", "example.invalid/kubeforge/crashloop:v1")
    # both of the kubelet's alternating reasons carry the refusal (the back-off repeats the last pull's error)
    seen = {}

    def waiting():
        statuses = core.read_namespaced_pod("unpullable", namespace).status.container_statuses or []
        state = statuses[0].state.waiting if statuses else None
        if state is not None and state.reason in ("ErrImagePull", "ImagePullBackOff"):
            seen[state.reason] = state.message
        return seen

    poll_until(waiting, 60, 0.5, "the kubelet to report the pull failure", until=lambda s: "ErrImagePull" in s or "ImagePullBackOff" in s, show=repr)
    for reason, message in seen.items():
        assert 'Head "https://127.0.0.1:1/v2/kubeforge/crashloop/manifests/v1?ns=example.invalid"' in message, (reason, message)
        assert "dial tcp 127.0.0.1:1: connect: connection refused" in message and "lookup" not in message, (reason, message)
