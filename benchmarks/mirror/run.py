"""Mirror copy benchmark (issue #21): catalog_mirror's copy engine (``oci.copy``) against skopeo, side by side.

Two real registries on loopback (Debian's docker-registry, TLS + htpasswd): the source holds an image set like an
operator's - ``--repos`` repositories, each a two-platform image index whose platform images share two 16 MiB base
layers across repositories and add an 8 MiB layer of their own - plus one image with a ``--big-mib`` layer (default
1024). Every measurement copies into a FRESH mirror registry (empty storage), all by digest:

- ``ours-c4`` / ``ours-c1``: ``oci.copy.Copier`` over the image references with 4 / 1 images at a time (what
  catalog_mirror runs after its plan), in a fresh ``python`` process;
- ``skopeo-copy``: ``skopeo copy --all --preserve-digests`` per image, one after the other;
- ``skopeo-sync``: ``skopeo sync --all --preserve-digests`` per repository (docker to docker);
- ``get-only`` / ``put-only`` (the big image only, no copy): its one layer downloaded by ``curl`` to ``/dev/null``,
  and uploaded by our client from memory (the same bytes, generated; curl's upload, and ours from a file, were
  slower) - each registry's own time for those bytes. A copy cannot end before the slower of the two: the floor.

Outputs compared: after each run every source manifest (indexes and platform images) must be in the mirror under
its digest, with the same bytes (``put-only``: the layer must be there). Wall time, CPU time and peak RSS per cell
are the medians of ``--repeat`` runs, the tools alternating. The big-layer cell shows the peak memory does not grow with layer size.
Targets: ours <= 0.5x skopeo's wall time (the better of copy and sync), peak memory bounded.

    .venv/bin/python benchmarks/mirror/run.py [--repos 8] [--big-mib 1024] [--repeat 3] [--out r.json] [--markdown r.md]

skopeo comes from Debian (``benchmarks/mirror/install-skopeo.sh``; ``make bench-mirror`` runs it). This is a
benchmark, not a test: nothing here asserts on timings.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import COLLECTIONS, TESTS, ensure_collection_link, fmt, log, machine, median, timed_run, write_results  # noqa: E402

sys.path.insert(0, TESTS)  # the testbed package (LocalRegistry)
sys.path.insert(0, COLLECTIONS)

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
MIB = 1 << 20
BIG_SEED = "big"

OURS = r"""
import json, sys
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import RegistryStore
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import Mirror
spec = json.load(open(sys.argv[1]))
def store(side):
    s = spec[side]
    return RegistryStore(RegistryClient(s["host"], credentials=Credentials(s["username"], s["password"]), ca_file=s["ca_file"]))
class Ref:
    def __init__(self, reference):
        self.reference = reference
    def __str__(self):
        return self.reference
jobs = [(Ref(digest), repo, repo, None) for repo, digest in spec["images"]]
mirror = Mirror(store("source"), store("dest"), spec["concurrency"])
plans, failures = mirror.plan(jobs)
assert not failures, failures
done, failures = mirror.copy(plans)
assert not failures, failures
print(json.dumps({"copied": len(done)}))
"""


def measured_run(argv, env, timeout=3600):
    """timed_run's figures, with the peak RSS read from the process's own VmHWM (polled every 10 ms): a forked
    child's ``ru_maxrss`` starts at its parent's, which would put a floor under every cell."""
    peak = [0]
    done = threading.Event()

    def poll(pid):
        while not done.is_set():
            try:
                with open("/proc/%d/status" % pid) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                pass
            done.wait(0.01)

    real_popen = subprocess.Popen

    def popen(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        threading.Thread(target=poll, args=(proc.pid,), daemon=True).start()
        return proc

    subprocess.Popen = popen
    try:
        figures = timed_run(argv, env, timeout)
    finally:
        subprocess.Popen = real_popen
        done.set()
    figures["maxrss_mib"] = round(peak[0] / 1024.0, 1)
    return figures


def layer_chunks(size, seed):
    """The 1 MiB chunks of a pseudo-random layer of ``size`` bytes (the same for the same seed)."""
    block = hashlib.sha512(seed.encode()).digest() * (MIB // 64)
    for i in range(size // MIB):
        yield hashlib.sha256(b"%d" % i).digest() + block[32:]


def _blob(client, repo, size, seed):
    """Upload ``size`` pseudo-random bytes (streamed from a temporary file) and return the descriptor."""
    h = hashlib.sha256()
    with tempfile.TemporaryFile() as f:
        for chunk in layer_chunks(size, seed):
            h.update(chunk)
            f.write(chunk)
        f.seek(0)
        digest = "sha256:" + h.hexdigest()
        client.upload_blob_stream(repo, digest, size, f)
    return {"mediaType": OCI_LAYER, "digest": digest, "size": size}


def _manifest(client, repo, layers, arch):
    config = json.dumps({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": [layer["digest"] for layer in layers]}}).encode()
    client.upload_blob(repo, config)
    doc = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": OCI_CONFIG, "digest": "sha256:" + hashlib.sha256(config).hexdigest(), "size": len(config)},
            "layers": layers,
        }
    ).encode()
    digest = client.put_manifest(repo, "sha256:" + hashlib.sha256(doc).hexdigest(), doc, OCI_MANIFEST)
    return {"mediaType": OCI_MANIFEST, "digest": digest, "size": len(doc), "platform": {"architecture": arch, "os": "linux"}}


def populate(client, repos, big_mib):
    """The image set in the source registry; returns [(repository, top digest)] and {digest: manifest bytes}."""
    images = []
    for i in range(repos):
        repo = "bench/operator-%02d" % i
        children = []
        for arch in ("amd64", "arm64"):
            base = [_blob(client, repo, 16 * MIB, "base-%s-%d" % (arch, n)) for n in range(2)]
            own = _blob(client, repo, 8 * MIB, "own-%s-%d" % (arch, i))
            children.append(_manifest(client, repo, base + [own], arch))
        index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": children}).encode()
        images.append((repo, client.put_manifest(repo, "v1", index, OCI_INDEX)))
    big = []
    if big_mib:
        repo = "bench/big"
        desc = _manifest(client, repo, [_blob(client, repo, big_mib * MIB, BIG_SEED)], "amd64")
        client.put_manifest(repo, "v1", client.get_manifest(repo, desc["digest"])[0], OCI_MANIFEST)
        big = [(repo, desc["digest"])]
    return images, big


def manifests_of(client, images):
    """{(repo, digest): bytes} of every manifest of the images (indexes and their children)."""
    out = {}
    for repo, digest in images:
        data = client.get_manifest(repo, digest)[0]
        out[(repo, digest)] = data
        for child in json.loads(data).get("manifests") or ():
            out[(repo, child["digest"])] = client.get_manifest(repo, child["digest"])[0]
    return out


def compare(expected, dest_client):
    """Every source manifest is in the mirror under its digest with the same bytes; returns the mismatches."""
    bad = []
    for (repo, digest), data in expected.items():
        try:
            got = dest_client.get_manifest(repo, digest)[0]
        except Exception as exc:  # noqa: BLE001 - reported
            bad.append("%s@%s: %s" % (repo, digest, exc))
            continue
        if got != data:
            bad.append("%s@%s: other bytes" % (repo, digest))
    return bad


def cert_dir(registry, root):
    path = os.path.join(root, "certs-" + registry.host.replace(":", "_"))
    os.makedirs(path, exist_ok=True)
    shutil.copyfile(registry.ca_file, os.path.join(path, "ca.crt"))
    return path


GET_ONLY = r"""
curl -sS --fail --config <(printf 'user = "%s"\n' "$SOURCE_USER") --cacert "$SOURCE_CA" -o /dev/null "https://$SOURCE/v2/$REPO/blobs/$DIGEST"
"""

PUT_ONLY = r"""
import json, sys
spec = json.load(open(sys.argv[1]))
sys.path.insert(0, spec["here"])
from run import layer_chunks
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
class Layer:
    def __init__(self):
        self.chunks = layer_chunks(spec["size"], spec["seed"])
    def read(self, amount=-1):
        return next(self.chunks, b"")
client = RegistryClient(spec["host"], credentials=Credentials(spec["username"], spec["password"]), ca_file=spec["ca_file"])
print(client.upload_blob_stream(spec["repo"], spec["digest"], spec["size"], Layer()))
"""


def run_tool(tool, source, dest, images, work, env, layer=None):
    """One copy of ``images`` from source to dest with ``tool``; returns timed_run's figures (summed for skopeo
    copy's one process per image; peak RSS the largest)."""
    if tool.startswith("ours"):
        spec = os.path.join(work, "spec.json")
        with open(spec, "w") as f:
            json.dump(
                {
                    side: {"host": r.host, "username": r.username, "password": r.password, "ca_file": r.ca_file}
                    for side, r in (("source", source), ("dest", dest))
                }
                | {"images": images, "concurrency": int(tool[-1])},
                f,
            )
        return measured_run([sys.executable, "-c", OURS, spec], env)
    if tool == "get-only":
        repo, digest, _size = layer
        user = "%s:%s" % (source.username, source.password)
        return measured_run(["bash", "-c", GET_ONLY], dict(env, SOURCE=source.host, SOURCE_USER=user, SOURCE_CA=source.ca_file, REPO=repo, DIGEST=digest))
    if tool == "put-only":
        repo, digest, size = layer
        spec = os.path.join(work, "put.json")
        with open(spec, "w") as f:
            target = {"host": dest.host, "username": dest.username, "password": dest.password, "ca_file": dest.ca_file}
            json.dump(target | {"repo": repo, "digest": digest, "size": size, "seed": BIG_SEED, "here": HERE}, f)
        return measured_run([sys.executable, "-c", PUT_ONLY, spec], env)
    src_certs, dst_certs = cert_dir(source, work), cert_dir(dest, work)
    common = [
        "--src-creds",
        "%s:%s" % (source.username, source.password),
        "--dest-creds",
        "%s:%s" % (dest.username, dest.password),
        "--src-cert-dir",
        src_certs,
        "--dest-cert-dir",
        dst_certs,
        "--all",
        "--preserve-digests",
    ]
    if tool == "skopeo-copy":
        argvs = [
            ["skopeo", "copy", *common, "docker://%s/%s@%s" % (source.host, repo, digest), "docker://%s/%s@%s" % (dest.host, repo, digest)]
            for repo, digest in images
        ]
    else:
        argvs = [
            ["skopeo", "sync", *common, "--src", "docker", "--dest", "docker", "%s/%s" % (source.host, repo), "%s/%s" % (dest.host, repo.rsplit("/", 1)[0])]
            for repo in sorted({r for r, _d in images})
        ]
    total = {"wall_s": 0.0, "cpu_s": 0.0, "maxrss_mib": 0.0, "rc": 0}
    for argv in argvs:
        one = measured_run(argv, env)
        if one["rc"] != 0:
            raise SystemExit("%s failed: %s" % (" ".join(argv[:2]), one["stderr"][-2000:]))
        total["wall_s"] += one["wall_s"]
        total["cpu_s"] += one["cpu_s"]
        total["maxrss_mib"] = max(total["maxrss_mib"], one["maxrss_mib"])
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--repos", type=int, default=8)
    parser.add_argument("--big-mib", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    if not shutil.which("skopeo"):
        raise SystemExit("skopeo is not installed: run benchmarks/mirror/install-skopeo.sh (make bench-mirror does)")
    ensure_collection_link()
    from testbed.registry import LocalRegistry

    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient

    def client(r):
        return RegistryClient(r.host, credentials=Credentials(r.username, r.password), ca_file=r.ca_file)

    root = tempfile.mkdtemp(prefix="kubeforge-bench-mirror-")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([COLLECTIONS] + [p for p in sys.path if p.endswith("site-packages")]), HOME=root)
    source = LocalRegistry(Path(root) / "source", password="bench-" + os.urandom(4).hex())
    source.start()
    results = {
        "machine": machine(),
        "args": vars(args),
        "skopeo": subprocess.run(["skopeo", "--version"], capture_output=True, text=True, check=False).stdout.strip(),
        "cells": {},
    }
    try:
        log("populating the source: %d repositories, a %d MiB layer" % (args.repos, args.big_mib))
        images, big = populate(client(source), args.repos, args.big_mib)
        sets = {"set": images} | ({"big": big} if big else {})
        expected = {name: manifests_of(client(source), imgs) for name, imgs in sets.items()}
        big_layer = (big[0][0], json.loads(expected["big"][big[0]])["layers"][0]["digest"], args.big_mib * MIB) if big else None
        sizes = {"set": (2 * 2 * 16 + args.repos * 2 * 8), "big": args.big_mib}
        tools = ("ours-c4", "ours-c1", "skopeo-copy", "skopeo-sync", "get-only", "put-only")
        for name, imgs in sets.items():
            for rep in range(args.repeat):
                order = tools if rep % 2 == 0 else tuple(reversed(tools))
                for tool in order:
                    if name == "big" and tool in ("ours-c1", "skopeo-sync"):
                        continue  # one image: concurrency and sync change nothing
                    if name != "big" and tool in ("get-only", "put-only"):
                        continue
                    work = tempfile.mkdtemp(dir=root)
                    dest = LocalRegistry(Path(work) / "mirror", password="bench-" + os.urandom(4).hex())
                    dest.start()
                    os.sync()  # the cells before wrote gigabytes: written out now, not during this cell
                    try:
                        figures = run_tool(tool, source, dest, imgs, work, dict(env, HOME=work), big_layer)
                        if figures["rc"] != 0:
                            raise SystemExit("%s failed: %s" % (tool, figures.get("stderr", "")[-2000:]))
                        if tool == "get-only":
                            bad = []
                        elif tool == "put-only":
                            bad = [] if client(dest).blob_exists(*big_layer[:2]) else ["layer %s@%s missing" % big_layer[:2]]
                        else:
                            bad = compare(expected[name], client(dest))
                    finally:
                        dest.stop()
                        shutil.rmtree(work, ignore_errors=True)
                    if bad:
                        raise SystemExit("%s left the mirror different from the source: %s" % (tool, bad[:5]))
                    cell = results["cells"].setdefault(name, {}).setdefault(tool, [])
                    cell.append({k: figures[k] for k in ("wall_s", "cpu_s", "maxrss_mib")})
                    log("%s %s run %d: %.2fs, %.0f MiB peak" % (name, tool, rep + 1, figures["wall_s"], figures["maxrss_mib"]))
    finally:
        source.stop()
        shutil.rmtree(root, ignore_errors=True)

    lines = ["| image set | MiB | tool | wall s (median) | CPU s | peak RSS MiB | wall vs best skopeo |", "|---|---|---|---|---|---|---|"]
    for name, cells in results["cells"].items():
        med = {tool: {k: median([r[k] for r in runs]) for k in ("wall_s", "cpu_s", "maxrss_mib")} for tool, runs in cells.items()}
        best = min(med[t]["wall_s"] for t in med if t.startswith("skopeo"))
        results.setdefault("medians", {})[name] = med
        for tool, m in med.items():
            cells = (name, sizes[name], tool, fmt(m["wall_s"]), fmt(m["cpu_s"]), fmt(m["maxrss_mib"], 0), fmt(m["wall_s"] / best))
            lines.append("| %s | %d | %s | %s | %s | %s | %s |" % cells)
    write_results(results, "\n".join(lines) + "\n", args.out, args.markdown)


if __name__ == "__main__":
    main()
