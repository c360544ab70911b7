"""The testbed's real node: a kubelet of the control plane's release with Debian's containerd 1.6 and runc, on a CNI
bridge the testbed creates, beside the simulated (KWOK) nodes.

What it changes on the host, and how `down` undoes it (and then checks that it is undone, like processes and ports):
- the bridge kftb0 (10.88.0.1/24): pods get an address on it and only its route, no masquerade, ip_forward stays as
  it was, so nothing a pod sends leaves the machine; deleted by `down`.
- a firewall guard (chain KFTB-GUARD, first in OUTPUT and FORWARD): every address the cluster can hand out for a
  simulated pod or Service (the pod CIDR, the Service CIDR, any Service translated to an address that is neither
  local nor on the bridge) and every packet forwarded out of the bridge is dropped, so no kube-proxy rule or
  controller can dial a simulated address through the host's default route. Not a blanket drop of the private and
  documentation ranges: on this project's machine kind the uplink (192.0.2.0/24), its resolver (10.255.255.53) and
  the package registries (203.0.113.80) live in exactly those ranges.
- what the kubelet changes itself: sysctls (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory, ...), iptables
  and ip6tables chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY), the /kubepods cgroups, a shared bind mount of its root,
  /var/lib/kubelet (its device-plugins path is fixed); what containerd adds: /run/netns entries, /run/containerd,
  container mounts. `up` records the sysctls, the iptables rule sets and which of those paths existed; `down` kills
  the containers (runc), their shims, unmounts, removes what `up` created and restores the rest.

The node is tainted (kubeforge.io/real-node=true:NoSchedule) and labelled kubeforge.io/real-node=true, so only pods
that ask for it (TOLERATION, NODE_SELECTOR) run there; every test DaemonSet that selects type=kwok keeps its counts.
The kubelet listens on the bridge address with webhook authentication and authorization (no anonymous access); the
API server calls it with its own client certificate, by InternalIP. Its images (image_files: pause, crash, opm,
olm-util) are one-layer images of binaries the testbed builds (tests/testbed/programs, opm, OLM's copy-content and
cpb), pushed with the collection's own OCI code to the testbed registry, which containerd pulls from with the testbed
CA and credentials.
tests/testbed/README.md ("The real node") says what is real, what is still simulated, and why.
"""

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

from lib.polling import PollTimeout, poll_until

from testbed import config
from testbed.errors import TestbedError

NODE_NAME = "real-node-0"
# Started in this order (after the control plane and the registry), stopped in reverse.
PROCESSES = ("containerd", "kubelet", "kube-proxy", "coredns", "apiserver-relay")
BRIDGE = "kftb0"
BRIDGE_ADDRESS = "10.88.0.1"
POD_SUBNET = "10.88.0.0/24"
LABEL = "kubeforge.io/real-node"
TAINT = {"key": LABEL, "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": LABEL, "operator": "Exists", "effect": "NoSchedule"}
NODE_SELECTOR = {LABEL: "true"}
# A namespace with these annotations has every pod made in it scheduled on the real node (the API server's
# PodNodeSelector and PodTolerationRestriction admission plugins), as OpenShift's project node selector does: the way
# to get OLM's own pods (registry pods, bundle unpack Jobs, the operator's Deployment) there.
NAMESPACE_ANNOTATIONS = {
    "scheduler.alpha.kubernetes.io/node-selector": f"{LABEL}=true",
    "scheduler.alpha.kubernetes.io/defaultTolerations": json.dumps([TOLERATION]),
}
GUARD_CHAIN = "KFTB-GUARD"
CLUSTER_DOMAIN = "cluster.local"
# The kube-dns Service's ClusterIP (kube-proxy translates it to CoreDNS on the bridge address) and the file OLM's
# processes see as /etc/resolv.conf (cluster.py binds it in their private mount namespace).
DNS_SERVICE_IP = "10.0.0.10"
RESOLV_CONF = f"nameserver {BRIDGE_ADDRESS}\nsearch {CLUSTER_DOMAIN}\noptions ndots:5\n"
MANAGED_BY = {"endpointslice.kubernetes.io/managed-by": "kubeforge-testbed", "app.kubernetes.io/managed-by": "kubeforge-testbed"}
# What the kubelet (and later kube-proxy) may set; `up` records them, `down` writes back what changed.
SYSCTLS = (
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.route_localnet",
    "net.netfilter.nf_conntrack_max",
    "net.netfilter.nf_conntrack_tcp_timeout_established",
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait",
)
# Host directories the kubelet, containerd (its shims' sockets) and the CNI plugins (their results cache) write to
# outside their configured ones; `down` removes what `up` found absent, and within what existed, the new entries.
HOST_PATHS = ("/var/lib/kubelet", "/var/lib/cni", "/var/lib/cni/results", "/run/containerd", "/run/containerd/s", "/run/netns")
IPTABLES = ("iptables", "ip6tables")
IPTABLES_TABLES = ("filter", "nat", "mangle")
IMAGE_REPOSITORY = "kubeforge-testbed/{name}"
PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"
COREDNS_DIR = Path(__file__).resolve().parent / "coredns"
REPO_ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 90


class RealNodeError(TestbedError):
    """The real node cannot start, or `down` could not undo a host change."""


def _source_binary(prefix: str, directory: Path, files: tuple) -> str:
    """A binary build.sh names by a digest of its sources (`cat <files> | sha256sum`), so an edit builds a new one."""
    digest = hashlib.sha256()
    for name in files:
        digest.update((directory / name).read_bytes())
    return f"{prefix}-{digest.hexdigest()[:12]}"


def programs_binary_name() -> str:
    """The testbed's multi-call binary (tests/testbed/programs: pause, crash, relay)."""
    return _source_binary("testbed-programs", PROGRAMS_DIR, ("go.mod", "main.go"))


def coredns_binary_name() -> str:
    """CoreDNS with the testbed's plugins (tests/testbed/coredns)."""
    return _source_binary("coredns", COREDNS_DIR, ("go.mod", "go.sum", "main.go"))


def unavailable_reason() -> str:
    """Why the real node cannot run on this machine ('' when it can)."""
    if os.geteuid() != 0:
        return "the real node needs root (a bridge, iptables, mounts, cgroups)"
    missing = [tool for tool in ("containerd", "runc", "ip", "iptables", "iptables-save", "ip6tables-save") if not shutil.which(tool)]
    if not Path("/usr/lib/cni/bridge").is_file():
        missing.append("/usr/lib/cni/bridge")
    return f"missing {', '.join(missing)}: run `make testbed-deps`" if missing else ""


def _run(*argv: str, check: bool = True, input_text: str = None) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, input=input_text, capture_output=True, text=True, check=False)  # noqa: S603
    if check and result.returncode != 0:
        raise RealNodeError(f"`{' '.join(argv)}` failed ({result.returncode}): {result.stderr.strip()[:500]}")
    return result


# ------------------------------------------------------------------ configuration (pure)
def containerd_config(base: Path, registry: dict, password: str, sandbox_image: str) -> str:
    host, username = registry["host"], registry["username"]
    return f"""version = 2
root = "{base}/containerd/root"
state = "{base}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{base}/containerd/containerd.sock"
[ttrpc]
  address = "{base}/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox_image}"
  # The VM lacks CAP_SYS_RESOURCE: runc cannot lower a container's oom_score_adj below its own (realnode.md).
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{base}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{base}/cni"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{base}/certs.d"
    # containerd 1.6's hosts.toml cannot hold credentials.
    [plugins."io.containerd.grpc.v1.cri".registry.configs."{host}".auth]
      username = "{username}"
      password = "{password}"
"""


def registry_hosts_toml(registry: dict, server: str = None) -> str:
    """containerd's hosts.toml for pulls from ``server`` (default: the testbed registry itself) through the testbed
    registry, same repository paths - for another server, the mirror configuration of a disconnected node (what
    OpenShift writes from an ImageDigestMirrorSet). Written to ``<base>/certs.d/<server>/hosts.toml``; containerd
    reads it at each pull."""
    host = registry["host"]
    return f'server = "https://{server or host}"\n[host."https://{host}"]\n  capabilities = ["pull", "resolve"]\n  ca = "{registry["ca_file"]}"\n'


# Registries whose images must fail to pull (the KWOK stages' images, bundles that name no real operator image): the
# real node's containerd is sent to a loopback port nothing listens on (1, tcpmux: privileged, and the testbed never
# binds it) instead of its own resolver, so such a pull fails at once with "connection refused" and no DNS query or
# connection for these names ever leaves the machine. The hosts.toml names that port as its one [host] and as its
# ``server`` (containerd tries the [host] entries, then the server; without a server it would try the registry's own
# name last). containerd 1.6 rejects a hosts.toml without a [host] table ("invalid `host` tree", seen on the testbed)
# and then pulls from the name itself.
UNPULLABLE_REGISTRIES = ("example.invalid",)
REFUSING_REGISTRY = "https://127.0.0.1:1"


def refusing_hosts_toml() -> str:
    """containerd's hosts.toml that sends every pull from a registry of UNPULLABLE_REGISTRIES to REFUSING_REGISTRY."""
    return (
        "# kubeforge testbed: images of this registry must fail to pull, without a DNS query\n"
        f'server = "{REFUSING_REGISTRY}"\n[host."{REFUSING_REGISTRY}"]\n  capabilities = ["pull", "resolve"]\n'
    )


def cni_config(base: Path, service_cidr: str) -> dict:
    """The bridge plugin without gateway or masquerade: pods get an address, the bridge route and a route to the
    Service CIDR through the host's bridge address (kube-proxy translates it there), nothing else."""
    return {
        "cniVersion": "1.0.0",
        "name": "kubeforge-testbed",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": False,
                "ipMasq": False,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": POD_SUBNET, "gateway": BRIDGE_ADDRESS}]],
                    "routes": [{"dst": service_cidr, "gw": BRIDGE_ADDRESS}],
                    "dataDir": str(base / "cni-ipam"),
                },
            }
        ],
    }


def kubelet_config(base: Path, ca_file: str, serving: tuple, port: int, healthz_port: int) -> dict:
    cert, key = serving
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": BRIDGE_ADDRESS,
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True}, "x509": {"clientCAFile": ca_file}},
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": cert,
        "tlsPrivateKeyFile": key,
        "cgroupDriver": "cgroupfs",
        # v1.35 refuses cgroup v1 (this machine kind's hierarchy) unless told otherwise.
        "failCgroupV1": False,
        "failSwapOn": False,
        "podCIDR": POD_SUBNET,
        "registerWithTaints": [TAINT],
        "podLogsDir": str(base / "pod-logs"),
        "containerRuntimeEndpoint": f"unix://{base}/containerd/containerd.sock",
        # The testbed shares the machine's disk: evict only when it is really full.
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
        "imageGCHighThresholdPercent": 100,
        # Pods resolve only cluster names (CoreDNS forwards nothing): no host resolver in them.
        "resolvConf": "",
        "clusterDNS": [DNS_SERVICE_IP],
        "clusterDomain": CLUSTER_DOMAIN,
        # A crash loop restarts every 5 s instead of after 10, 20, 40 s...: tests of it wait seconds, not minutes. The
        # kubelet's own setting (KubeletCrashLoopBackOffMax, beta and on in v1.35), as a cluster admin may set it.
        "crashLoopBackOff": {"maxContainerRestartPeriod": "5s"},
    }


def corefile(kubeconfig: str, health_port: int, ready_port: int) -> str:
    return f""".:53 {{
    bind {BRIDGE_ADDRESS}
    errors
    health 127.0.0.1:{health_port}
    ready 127.0.0.1:{ready_port}
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {kubeconfig}
    }}
}}
"""


def kube_proxy_argv(binary: Path, kubeconfig: str, metrics_port: int, healthz_port: int) -> list:
    """kube-proxy in iptables mode for the real node, leaving the host's conntrack settings and localhost alone."""
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--hostname-override={NODE_NAME}",
        "--proxy-mode=iptables",
        f"--cluster-cidr={POD_SUBNET}",
        f"--nodeport-addresses={POD_SUBNET}",
        "--iptables-localhost-nodeports=false",
        "--conntrack-max-per-core=0",
        "--conntrack-tcp-timeout-established=0",
        "--conntrack-tcp-timeout-close-wait=0",
        f"--metrics-bind-address=127.0.0.1:{metrics_port}",
        f"--healthz-bind-address=127.0.0.1:{healthz_port}",
        "--v=1",
    ]


def service_objects(relay_port: int) -> list:
    """What lets pods reach the API server and CoreDNS by their Service addresses: EndpointSlices of the `kubernetes`
    Service (the testbed runs no endpoint reconciler) and of a kube-dns Service, both on the bridge address."""

    def endpoints(name: str, namespace: str, ports: list) -> dict:
        return {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": f"{name}-kubeforge-testbed", "namespace": namespace, "labels": dict(MANAGED_BY, **{"kubernetes.io/service-name": name})},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [BRIDGE_ADDRESS], "conditions": {"ready": True}}],
            "ports": ports,
        }

    dns_ports = [{"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]
    return [
        endpoints("kubernetes", "default", [{"name": "https", "port": relay_port, "protocol": "TCP"}]),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"app.kubernetes.io/managed-by": "kubeforge-testbed"}},
            "spec": {"clusterIP": DNS_SERVICE_IP, "ports": [dict(p, targetPort=53) for p in dns_ports]},
        },
        endpoints("kube-dns", "kube-system", dns_ports),
    ]


def coredns_rbac(user: str) -> list:
    name = "kubeforge-testbed-coredns"
    labels = {"app.kubernetes.io/managed-by": "kubeforge-testbed"}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels},
            "rules": [
                {"apiGroups": [""], "resources": ["services", "namespaces"], "verbs": ["list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        },
    ]


def guard_rules(pod_cidr: str, service_cidr: str) -> list:
    """iptables rules of GUARD_CHAIN (filter table), in order: see the module docstring."""
    chain = ["-A", GUARD_CHAIN]
    return [
        chain + ["-m", "addrtype", "--dst-type", "LOCAL", "-j", "RETURN"],
        chain + ["-d", POD_SUBNET, "-j", "RETURN"],
        chain + ["-m", "conntrack", "--ctstate", "DNAT", "-j", "DROP"],
        chain + ["-d", pod_cidr, "-j", "DROP"],
        chain + ["-d", service_cidr, "-j", "DROP"],
        chain + ["-i", BRIDGE, "-j", "DROP"],
    ]


def normalise_iptables_save(text: str) -> list:
    """iptables-save output without comments and counters, for comparing rule sets."""
    lines = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith(":"):
            line = line.rsplit(" ", 1)[0] if line.endswith("]") else line
        lines.append(line)
    return lines


def iptables_undo(before: list, now: list) -> list:
    """The iptables commands (argv tails) that turn rule set `now` back into `before` (both normalised, one table
    each): delete every rule `now` added, then flush and delete every chain it added."""
    table = next((line[1:] for line in now if line.startswith("*")), "filter")
    old_chains = {line[1:].split(" ")[0] for line in before if line.startswith(":")}
    new_chains = [line[1:].split(" ")[0] for line in now if line.startswith(":") and line[1:].split(" ")[0] not in old_chains]
    commands = []
    for line in now:
        if line.startswith("-A ") and line not in before:
            argv = shlex.split(line)
            commands.append(["-t", table, "-D"] + argv[1:])
    for chain in new_chains:
        commands.append(["-t", table, "-F", chain])
    for chain in new_chains:
        commands.append(["-t", table, "-X", chain])
    return commands


# ------------------------------------------------------------------ host state
def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctls() -> dict:
    values = {}
    for name in SYSCTLS:
        try:
            values[name] = _sysctl_path(name).read_text().strip()
        except OSError:
            continue
    return values


def iptables_snapshot() -> dict:
    """{family: {table: normalised rules}}."""
    snapshot = {}
    for family in IPTABLES:
        snapshot[family] = {}
        for table in IPTABLES_TABLES:
            result = _run(f"{family}-save", "-t", table, check=False)
            snapshot[family][table] = normalise_iptables_save(result.stdout) if result.returncode == 0 else []
    return snapshot


def _mounts_under(prefixes: list) -> list:
    points = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split(" ")[4].encode().decode("unicode_escape")
            if any(point == p or point.startswith(p.rstrip("/") + "/") for p in prefixes):
                points.append(point)
    return sorted(set(points), key=lambda p: p.count("/"), reverse=True)


def _kubepods_cgroups() -> list:
    return sorted(Path("/sys/fs/cgroup").glob("*/kubepods")) + sorted(Path("/sys/fs/cgroup").glob("kubepods"))


def _shims(socket_path: str) -> list:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and b"containerd-shim" in argv[0] and socket_path.encode() in argv:
            pids.append(int(proc.name))
    return pids


# ------------------------------------------------------------------ up
def oci_modules():
    """The collection's OCI modules (client, image), imported from this checkout."""
    from importlib import import_module

    base = "ansible_collections.kubeforge.operators.plugins.module_utils.oci."
    if "ansible_collections.kubeforge.operators" not in sys.modules:
        # A link outside the checkout (a link to its root inside it would make tools that walk the tree loop). The run
        # directory outlives checkouts: the link is pointed at this one, and appended to sys.path - ahead of a
        # caller's own path it would make the collection's packages resolve in another checkout.
        link = config.RUN_DIR / "collections" / "ansible_collections" / "kubeforge" / "operators"
        if not link.is_symlink() or os.path.realpath(link) != os.path.realpath(REPO_ROOT):
            link.parent.mkdir(parents=True, exist_ok=True)
            tmp = link.with_name(f".operators-{os.getpid()}")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(REPO_ROOT)
            os.replace(tmp, link)
        if str(link.parents[2]) not in sys.path:
            sys.path.append(str(link.parents[2]))
    return import_module(base + "client"), import_module(base + "image")


def shared_libraries(binary: Path) -> list:
    """The dynamic loader and libraries `binary` needs (from ldd), as absolute paths."""
    result = _run("ldd", str(binary), check=False)
    if result.returncode != 0 or "not a dynamic executable" in result.stdout + result.stderr:
        return []
    libraries = []
    for line in result.stdout.splitlines():
        parts = line.split()
        path = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if path.startswith("/"):
            libraries.append(path)
    return libraries


def image_files(bins: Path, name: str) -> tuple:
    """(files, entrypoint, cmd) of the testbed image `name`: files maps a path in the image to a host file (or None
    for a directory, with its mode: (source, mode))."""
    programs = bins / programs_binary_name()
    if name in ("pause", "crash"):
        return {f"/{name}": (programs, 0o755)}, [f"/{name}"], None
    if name == "opm":
        # As upstream's opm image: opm (a cgo binary: its libraries come along), grpc_health_probe for the registry
        # pod's probes, a world-writable /tmp for opm's cache.
        files = {"/bin/opm": (bins / "opm", 0o755), "/bin/grpc_health_probe": (bins / "grpc_health_probe", 0o755), "/tmp": (None, 0o1777)}
        files.update({lib: (Path(os.path.realpath(lib)), 0o755) for lib in shared_libraries(bins / "opm")})
        return files, ["/bin/opm"], ["serve", "/configs", "--cache-dir=/tmp/cache"]
    if name == "olm-util":
        # OLM's util image: `cp` and the programs its Jobs and extractContent pods copy into other containers.
        return {"/bin/cp": (programs, 0o755), "/bin/copy-content": (bins / "copy-content", 0o755), "/bin/cpb": (bins / "cpb", 0o755)}, None, None
    raise RealNodeError(f"no testbed image {name!r}")


def build_image(files: dict, entrypoint, cmd, env: dict = None, workdir: str = None):
    """A one-layer OCI image (deterministic tar+gzip; directories and modes as given) for the collection's push."""
    import gzip
    import io
    import tarfile

    client, image = oci_modules()
    paths = set()
    for path in files:
        parent = Path(path).parent
        while str(parent) != "/":
            paths.add(str(parent))
            parent = parent.parent
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(paths | set(files)):
            source, mode = files.get(path, (None, 0o755))
            info = tarfile.TarInfo(path.lstrip("/") + ("/" if source is None else ""))
            info.mode, info.mtime, info.uid, info.gid = mode, 0, 0, 0
            if source is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                data = Path(source).read_bytes()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    tar_bytes = raw.getvalue()
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=0, compresslevel=1) as handle:
        handle.write(tar_bytes)
    layer = image.Layer(compressed.getvalue(), client.sha256_digest(tar_bytes), image.OCI_LAYER_GZIP)
    inner = {"Env": list(image.DEFAULT_ENV) + [f"{k}={v}" for k, v in sorted((env or {}).items())], "Labels": {"io.kubeforge.testbed": "true"}}
    if workdir:
        inner["WorkingDir"] = workdir
    if entrypoint:
        inner["Entrypoint"] = entrypoint
    if cmd:
        inner["Cmd"] = cmd
    config = {"architecture": "amd64", "os": "linux", "config": inner, "rootfs": {"type": "layers", "diff_ids": [layer.diff_id]}}
    config_bytes = image.canonical_json(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": image.OCI_MANIFEST,
        "config": {"mediaType": image.OCI_CONFIG, "digest": client.sha256_digest(config_bytes), "size": len(config_bytes)},
        "layers": [{"mediaType": layer.media_type, "digest": layer.digest, "size": layer.size}],
    }
    blobs = {client.sha256_digest(config_bytes): config_bytes, layer.digest: layer.data}
    return image.CatalogImage(manifest, image.canonical_json(manifest), image.OCI_MANIFEST, config, config_bytes, blobs, None, [], [layer])


def image_tags(versions: dict) -> dict:
    return {"pause": "v1", "crash": "v1", "opm": versions.get("opm", "v1"), "olm-util": versions.get("olm", "v1")}


def image_ref(registry_host: str, name: str, versions: dict) -> str:
    return f"{registry_host}/{IMAGE_REPOSITORY.format(name=name)}:{image_tags(versions)[name]}"


def push_images(bins: Path, registry: dict, versions: dict) -> dict:
    """Build the testbed's images and push them to its registry.

    Returns {name: tag reference} and {name@digest: digest reference} (the same image under another reference: a
    second revision of a workload that needs no second image)."""
    client, image = oci_modules()
    password = Path(registry["password_file"]).read_text().strip()
    refs = {}
    for name in image_tags(versions):
        built = build_image(*image_files(bins, name))
        ref = image_ref(registry["host"], name, versions)
        image.push_image(client.client_for(ref, username=registry["username"], password=password, ca_file=registry["ca_file"]), ref, built)
        refs[name] = ref
        refs[f"{name}@digest"] = f"{registry['host']}/{IMAGE_REPOSITORY.format(name=name)}@{built.digest}"
    return refs


def record_host(base: Path) -> dict:
    """What `down` needs to undo the real node's host changes (taken before anything changes)."""
    return {
        "base": str(base),
        "sysctls": read_sysctls(),
        "iptables": iptables_snapshot(),
        "existing_paths": [p for p in HOST_PATHS if os.path.lexists(p)],
        "entries": _entries(),
    }


def _entries() -> list:
    """The entries of HOST_PATHS (full paths)."""
    return sorted(str(entry) for path in HOST_PATHS if Path(path).is_dir() for entry in Path(path).iterdir())


def _created(record: dict) -> list:
    """HOST_PATHS and their entries that were not there at `up`, parents first."""
    before = set(record["entries"]) | set(record["existing_paths"])
    paths = [p for p in HOST_PATHS if os.path.lexists(p)] + _entries()
    return sorted({p for p in paths if p not in before}, key=lambda p: p.count("/"))


def install_network(pod_cidr: str, service_cidr: str) -> None:
    """The bridge and the firewall guard."""
    if _run("ip", "link", "show", BRIDGE, check=False).returncode != 0:
        _run("ip", "link", "add", BRIDGE, "type", "bridge")
        _run("ip", "addr", "add", f"{BRIDGE_ADDRESS}/24", "dev", BRIDGE)
    _run("ip", "link", "set", BRIDGE, "up")
    _run("iptables", "-t", "filter", "-N", GUARD_CHAIN)
    for rule in guard_rules(pod_cidr, service_cidr):
        _run("iptables", "-t", "filter", *rule)
    for builtin in ("OUTPUT", "FORWARD"):
        _run("iptables", "-t", "filter", "-I", builtin, "1", "-j", GUARD_CHAIN)


def write_configs(base: Path, registry: dict, sandbox_image: str, ca_file: str, serving: tuple, ports: tuple, service_cidr: str) -> tuple:
    """containerd's and the kubelet's configuration files under `base`; returns (containerd config, kubelet config)."""
    for sub in ("containerd", "cni", "cni-ipam", "pod-logs", "runc", "kubelet", "certs.d"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    hosts = base / "certs.d" / registry["host"]
    hosts.mkdir(parents=True, exist_ok=True)
    (hosts / "hosts.toml").write_text(registry_hosts_toml(registry))
    for unpullable in UNPULLABLE_REGISTRIES:
        (base / "certs.d" / unpullable).mkdir(parents=True, exist_ok=True)
        (base / "certs.d" / unpullable / "hosts.toml").write_text(refusing_hosts_toml())
    password = Path(registry["password_file"]).read_text().strip()
    containerd_file = base / "containerd" / "config.toml"
    tmp = containerd_file.with_suffix(".tmp")
    tmp.write_text(containerd_config(base, registry, password, sandbox_image))
    tmp.chmod(0o600)
    tmp.replace(containerd_file)
    (base / "cni" / "10-kubeforge-testbed.conflist").write_text(json.dumps(cni_config(base, service_cidr), indent=2))
    kubelet_file = base / "kubelet" / "config.json"
    kubelet_file.write_text(json.dumps(kubelet_config(base, ca_file, serving, *ports), indent=2))
    return containerd_file, kubelet_file


def kubelet_argv(binary: Path, config_file: Path, kubeconfig: str, base: Path) -> list:
    return [
        str(binary),
        f"--config={config_file}",
        f"--kubeconfig={kubeconfig}",
        f"--root-dir={base / 'kubelet' / 'root'}",
        f"--hostname-override={NODE_NAME}",
        f"--node-ip={BRIDGE_ADDRESS}",
        f"--node-labels={LABEL}=true",
        "--v=1",
    ]


# ------------------------------------------------------------------ down
def undo_host(record: dict, log: Callable[[str], None]) -> list:
    """Undo every host change of the real node once its processes are stopped; returns what could not be undone."""
    base = Path(record["base"])
    runc_root = base / "runc" / "k8s.io"
    if runc_root.is_dir():
        for container in sorted(runc_root.iterdir()):
            _run("runc", "--root", str(runc_root), "delete", "--force", container.name, check=False)
    shims = _shims(str(base / "containerd" / "containerd.sock"))
    for pid in shims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    created = _created(record)
    for point in _mounts_under([str(base), *created]):
        _run("umount", "--lazy", point, check=False)
    for cgroup in _kubepods_cgroups():
        for directory in sorted((p for p in cgroup.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True) + [cgroup]:
            try:
                directory.rmdir()
            except OSError:
                pass
    for family in IPTABLES:
        for table in IPTABLES_TABLES:
            now = normalise_iptables_save(_run(f"{family}-save", "-t", table, check=False).stdout)
            for command in iptables_undo(record["iptables"][family][table], now):
                _run(family, *command, check=False)
    for name, value in record["sysctls"].items():
        path = _sysctl_path(name)
        try:
            if path.read_text().strip() != value:
                path.write_text(value)
        except OSError as exc:
            log(f"cannot restore sysctl {name}={value}: {exc}")
    _run("ip", "link", "del", BRIDGE, check=False)
    with contextlib.suppress(PollTimeout):  # the mounts checked below decide what may be deleted
        poll_until(lambda: not _shims(str(base / "containerd" / "containerd.sock")), 10, interval=0.2, describe="containerd's shims to exit")
    # Never delete through a mount that is still there.
    for path in [str(base)] + _created(record):
        if os.path.lexists(path) and not _mounts_under([path]):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                Path(path).unlink(missing_ok=True)
    return leftovers(record)


def leftovers(record: dict) -> list:
    """The real node's host changes still in place (empty when `down` undid them all)."""
    base = Path(record["base"])
    found = []
    shims = _shims(str(base / "containerd" / "containerd.sock"))
    if shims:
        found.append(f"containerd shims running: {shims}")
    mounts = _mounts_under([str(base)] + _created(record))
    if mounts:
        found.append(f"mounts: {mounts[:5]}")
    cgroups = _kubepods_cgroups()
    if cgroups:
        found.append(f"cgroups: {[str(c) for c in cgroups[:5]]}")
    now = iptables_snapshot()
    for family in IPTABLES:
        for table in IPTABLES_TABLES:
            if set(now[family][table]) != set(record["iptables"][family][table]):
                found.append(f"{family} {table} rules differ from before `up`")
    changed = {name: value for name, value in read_sysctls().items() if record["sysctls"].get(name, value) != value}
    if changed:
        found.append(f"sysctls: {changed}")
    if _run("ip", "link", "show", BRIDGE, check=False).returncode == 0:
        found.append(f"bridge {BRIDGE}")
    created = _created(record)
    if created:
        found.append(f"paths: {created[:5]}")
    return found


def ansible_vars(state: dict) -> dict:
    """``testbed_real_node`` for ansible-vars.json (nothing on a testbed without its real node): its name, its images
    (pause, crash, opm, olm-util, each also ``<name>@digest``) and what puts a pod there - the namespace annotations,
    or the node selector and tolerations of a pod spec."""
    facts = state.get("real_node")
    if not facts:
        return {}
    return {
        "testbed_real_node": {
            "name": facts["name"],
            "images": dict(facts["images"]),
            "namespace_annotations": dict(NAMESPACE_ANNOTATIONS),
            "node_selector": dict(NODE_SELECTOR),
            "tolerations": [dict(TOLERATION)],
        }
    }
