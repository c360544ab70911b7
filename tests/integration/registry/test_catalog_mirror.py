"""catalog_mirror between two real registries: the source (htpasswd) holding a catalog, bundle images, a two-platform
operator image index with a 96 MiB layer and a tag-only helper image; the mirror (token auth, only ``kubeforge/*``
writable). Proves the plan, the copy by digest (every manifest and blob checked against the source), the rebuilt
catalog, the cluster resources, idempotence, resuming after SIGKILL mid-copy, the round trip through a directory,
and the errors for a bad selection and a refused push."""

import base64
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import MirrorError
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror_run import run_mirror
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import FilterError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import RegistryError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    BaseImage,
    build_catalog_image,
    build_directory_image,
    push_image,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
BIG = 96 * 1024 * 1024


def _push_dir_image(client, repo, tag, tmp, files, platform="linux/amd64", labels=None):
    src = tmp / ("%s-%s-%s" % (repo.replace("/", "-"), tag, platform.replace("/", "-")))
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).write_text(text)
    image = build_directory_image(str(src), "/", labels=labels, platform=platform)
    push_image(client, "%s/%s:%s" % (client.registry, repo, tag), image)
    return image


def _push_big_image(client, repo, tmp, platform):
    """An image whose one layer is BIG random bytes (uploaded streamed, pushed by digest)."""
    path = tmp / ("big-%s" % platform.replace("/", "-"))
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _chunk in range(BIG // (1 << 20)):
            chunk = os.urandom(1 << 20)
            digest.update(chunk)
            f.write(chunk)
    layer = "sha256:" + digest.hexdigest()
    with open(path, "rb") as f:
        client.upload_blob_stream(repo, layer, BIG, f)
    os_name, arch = platform.split("/")
    config = json.dumps({"architecture": arch, "os": os_name, "rootfs": {"type": "layers", "diff_ids": [layer]}},
                        sort_keys=True).encode()
    client.upload_blob(repo, config)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                      "digest": "sha256:" + hashlib.sha256(config).hexdigest(), "size": len(config)},
                           "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer,
                                       "size": BIG}]}, sort_keys=True).encode()
    digest = client.put_manifest(repo, "sha256:" + hashlib.sha256(manifest).hexdigest(), manifest, OCI_MANIFEST)
    return {"mediaType": OCI_MANIFEST, "digest": digest, "size": len(manifest),
            "platform": {"architecture": arch, "os": os_name}}


def _bundle(package, version, image, related, replaces=None):
    props = [{"type": "olm.package", "value": {"packageName": package, "version": version}}]
    blob = {"schema": "olm.bundle", "name": "%s.v%s" % (package, version), "package": package, "image": image,
            "properties": props, "relatedImages": [{"name": "r%d" % i, "image": r} for i, r in enumerate(related)]}
    entry = {"name": blob["name"]}
    if replaces:
        entry["replaces"] = "%s.v%s" % (package, replaces)
    return blob, entry


@pytest.fixture(scope="module")
def source(registry, opm_base, tmp_path_factory):
    """The source registry's content; returns the catalog reference and the images the demo package names."""
    tmp = tmp_path_factory.mktemp("mirror-source")
    client = registry.client()
    host = registry.host
    children = [_push_big_image(client, "kubeforge/operator", tmp, p) for p in ("linux/amd64", "linux/arm64")]
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": children}, sort_keys=True).encode()
    operator = "%s/kubeforge/operator@%s" % (host, client.put_manifest("kubeforge/operator", "v1", index, OCI_INDEX))
    _push_dir_image(client, "kubeforge/helper", "latest", tmp, {"helper": "help"})
    helper = "%s/kubeforge/helper:latest" % host
    bundles, entries = {}, {"demo": [], "other": []}
    for package, versions in (("demo", ("1.0.0", "1.1.0", "2.0.0")), ("other", ("0.1.0",))):
        previous = None
        for version in versions:
            image = _push_dir_image(client, "kubeforge/%s-bundle" % package, version, tmp,
                                    {"version": version, "package": package})
            ref = "%s/kubeforge/%s-bundle@%s" % (host, package, image.digest)
            related = [operator] + ([helper] if version == "2.0.0" else [])
            blob, entry = _bundle(package, version, ref, related, previous)
            bundles[blob["name"]] = blob
            entries[package].append(entry)
            previous = version
    fbc = tmp / "fbc"
    for package in entries:
        (fbc / package).mkdir(parents=True)
        docs = [{"schema": "olm.package", "name": package, "defaultChannel": "stable"},
                {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries[package]}]
        docs += [b for b in bundles.values() if b["package"] == package]
        (fbc / package / "catalog.json").write_text("\n".join(json.dumps(d) for d in docs))
    base = BaseImage.pull(opm_base[0], client)
    catalog = build_catalog_image(str(fbc), base=base)
    push_image(client, "%s/kubeforge/index:v1" % host, catalog)
    kept = [b for b in bundles.values() if b["name"] in ("demo.v1.1.0", "demo.v2.0.0")]
    return {"catalog": "%s/kubeforge/index:v1" % host, "catalog_digest": catalog.digest, "operator": operator,
            "helper": helper, "kept": kept, "host": host}


@pytest.fixture(scope="module")
def auth(registry, token_registry, tmp_path_factory):
    """A docker config for the source registry and one CA bundle for both registries."""
    tmp = tmp_path_factory.mktemp("mirror-auth")
    config = tmp / "config.json"
    token = base64.b64encode(("%s:%s" % (registry.username, registry.password)).encode()).decode()
    config.write_text(json.dumps({"auths": {registry.host: {"auth": token}}}))
    bundle = tmp / "ca.pem"
    bundle.write_text(open(registry.ca_file).read() + open(token_registry.ca_file).read())
    return {"docker_config": str(config), "ca_file": str(bundle), "registry_username": "pusher",
            "registry_password": token_registry.tokens.users["pusher"]}


def _params(**kw):
    params = dict(source_image=None, from_dir=None, mirror=None, to_dir=None, select=None, blocked_images=[], catalog_image=None,
                  platforms=None, concurrency=4, manifests_dir=None, resource_name=None, catalog_source_namespace="openshift-marketplace",
                  registry_username=None, registry_password=None, docker_config=None, ca_file=None,
                  validate_certs=True, plain_http=False, timeout=60)
    params.update(kw)
    return params


SELECT = {
    "full": False,
    "packages": [{"name": "demo", "min_version": "1.1.0", "max_version": None, "default_channel": None, "installed_version": None, "channels": []}],
}


def _run(params, check_mode=False):
    return run_mirror(params, check_mode=check_mode)


def _assert_copied(src_client, dst_client, source_ref, mirror_ref):
    """Every manifest and blob of the mirrored image is in the mirror with the source's bytes (manifests) or digest."""
    src_repo = source_ref.split("/", 1)[1].split("@")[0].split(":")[0]
    dst_repo = mirror_ref.split("/", 1)[1].split("@")[0].split(":")[0]
    digest = mirror_ref.split("@")[1]
    data = src_client.get_manifest(src_repo, digest)[0]
    assert dst_client.get_manifest(dst_repo, digest)[0] == data
    doc = json.loads(data)
    for child in doc.get("manifests") or ():
        child_data = src_client.get_manifest(src_repo, child["digest"])[0]
        assert dst_client.get_manifest(dst_repo, child["digest"])[0] == child_data
        for blob in [json.loads(child_data)["config"]] + json.loads(child_data)["layers"]:
            assert dst_client.blob_exists(dst_repo, blob["digest"]), (mirror_ref, blob)
    for blob in ([doc["config"]] + doc["layers"]) if "config" in doc else ():
        assert dst_client.blob_exists(dst_repo, blob["digest"]), (mirror_ref, blob)


def _upload_under_way(root):
    """A registry's upload session holds more than 1 MiB (directories come and go while we look: errors are ignored)."""
    for directory, _dirs, files in os.walk(root):
        if "data" in files and os.path.basename(os.path.dirname(directory)) == "_uploads":
            try:
                if os.stat(os.path.join(directory, "data")).st_size > (1 << 20):
                    return True
            except OSError:
                pass
    return False


def _kill_mid_copy(params, token_registry, tmp_path):
    """Run the mirror in a child process and SIGKILL it while a blob upload into the mirror is under way; returns
    None then, else what the child printed (it ended first)."""
    script = tmp_path / "run.py"
    (tmp_path / "params.json").write_text(json.dumps(params))
    script.write_text("import json, sys\nfrom ansible_collections.kubeforge.operators.plugins.module_utils.catalog."
                      "mirror_run import run_mirror\nrun_mirror(json.load(open(sys.argv[1])))\n")
    # this checkout's collection and the virtualenv, nothing else of this process's sys.path
    collections = str(Path(__file__).resolve().parents[3] / ".build" / "collections")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([collections] + [p for p in sys.path if p.endswith("site-packages")]))
    output = tmp_path / "child.log"
    with open(output, "wb") as log:
        proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "params.json")], env=env,
                                start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    uploads = token_registry.root / "storage" / "docker" / "registry" / "v2" / "repositories"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if _upload_under_way(uploads):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
                return None
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return "exit %s: %s" % (proc.returncode, output.read_text()[-2000:])


def test_mirror_plan_copy_resume_and_resources(source, auth, registry, token_registry, tmp_path):
    mirror = "%s/kubeforge/mirror" % token_registry.host
    params = _params(source_image=source["catalog"], mirror=mirror, select=SELECT,
                     manifests_dir=str(tmp_path / "manifests"), **auth)
    dst = token_registry.client()
    src = registry.client()

    plan = _run(params, check_mode=True)
    assert plan["changed"] is True
    assert [i["state"] for i in plan["images"]] == ["missing"] * 5
    sources = [i["source"] for i in plan["images"]]
    assert sources[0] == source["catalog"]
    assert set(sources[1:]) == {b["image"] for b in source["kept"]} | {source["operator"], source["helper"]}
    assert plan["totals"]["bytes_to_copy"] == plan["totals"]["bytes"] > 2 * BIG
    assert plan["catalog"]["packages"] == ["demo"]
    assert dst.head_manifest("kubeforge/mirror/kubeforge/index", "v1") is None  # check mode wrote nothing
    assert not (tmp_path / "manifests").exists()

    ended = _kill_mid_copy(params, token_registry, tmp_path)
    assert ended is None, "the copy ended before a big blob was under way: %s" % ended
    assert dst.head_manifest("kubeforge/mirror/kubeforge/index", "v1") is None  # the catalog is pushed last

    first = _run(params)
    assert first["changed"] is True
    assert {i["state"] for i in first["images"]} <= {"copied", "present"}
    for image in first["images"]:
        _assert_copied(src, dst, image["source"], image["mirror"])
    assert first["totals"]["copied"] >= 1

    # the rebuilt catalog: only the kept bundles, served without opm's stale cache, over the source catalog's layers
    catalog = first["catalog"]
    assert catalog["image"] == "%s/kubeforge/index:v1@%s" % (mirror, catalog["digest"])
    fbc, pulled = pull_catalog(catalog["image"], str(tmp_path / "pulled"), client=dst)
    assert sorted(os.listdir(fbc)) == ["demo"]
    names = sorted(b["name"] for b in load(fbc).bundles)
    assert names == ["demo.v1.1.0", "demo.v2.0.0"]
    assert pulled.config["config"]["Cmd"][-1] == "--cache-enforce-integrity=false"
    source_layers = [layer["digest"] for layer in json.loads(src.get_manifest("kubeforge/index", "v1")[0])["layers"]]
    assert [layer["digest"] for layer in pulled.manifest["layers"]][:len(source_layers)] == source_layers

    resources = first["resources"]
    idms = resources["image_digest_mirror_set"]["spec"]["imageDigestMirrors"]
    host = source["host"]
    assert idms == [{"source": "%s/kubeforge/demo-bundle" % host, "mirrors": ["%s/kubeforge/demo-bundle" % mirror]},
                    {"source": "%s/kubeforge/operator" % host, "mirrors": ["%s/kubeforge/operator" % mirror]}]
    assert resources["image_tag_mirror_set"]["spec"]["imageTagMirrors"] == [
        {"source": "%s/kubeforge/helper" % host, "mirrors": ["%s/kubeforge/helper" % mirror]}]
    catalog_image = "%s/kubeforge/index@%s" % (mirror, catalog["digest"])
    assert resources["catalog_source"]["spec"] == {"sourceType": "grpc", "image": catalog_image}
    assert resources["cluster_catalog"]["spec"]["source"]["image"]["ref"] == catalog_image
    assert "%s=%s" % (source["operator"], source["operator"].replace(host, mirror)) in first["mapping"]
    written = sorted(os.listdir(tmp_path / "manifests"))
    assert written == ["catalogsource.yaml", "clustercatalog.yaml", "imagedigestmirrorset.yaml",
                       "imagetagmirrorset.yaml", "mapping.txt"]

    again = _run(params)
    assert again["changed"] is False
    assert [i["state"] for i in again["images"]] == ["present"] * 5
    assert again["catalog"]["digest"] == catalog["digest"]
    assert auth["registry_password"] not in json.dumps([first, again])


def test_mirror_through_a_directory(source, auth, registry, token_registry, tmp_path):
    layout = tmp_path / "transfer"
    to_disk = _run(_params(source_image=source["catalog"], to_dir=str(layout), select=SELECT,
                           docker_config=auth["docker_config"], ca_file=auth["ca_file"]))
    assert to_disk["changed"] is True and len(to_disk["images"]) == 5
    index = json.loads((layout / "index.json").read_text())
    names = sorted(m["annotations"]["org.opencontainers.image.ref.name"] for m in index["manifests"])
    assert "%s/kubeforge/index:v1" % source["host"] in names and len(names) == 6  # 5 images and the rebuilt catalog

    mirror = "%s/kubeforge/airgap" % token_registry.host
    params = _params(from_dir=str(layout), mirror=mirror, ca_file=auth["ca_file"],
                     registry_username="pusher", registry_password=auth["registry_password"])
    pushed = _run(params)
    assert pushed["changed"] is True
    assert pushed["catalog"]["digest"] == to_disk["catalog"]["digest"]
    dst = token_registry.client()
    assert dst.head_manifest("kubeforge/airgap/kubeforge/index", "v1")["digest"] == to_disk["catalog"]["digest"]
    for image in pushed["images"]:
        if image["source"] != "%s/kubeforge/index:v1" % source["host"]:  # the rebuilt catalog is not in the source
            _assert_copied(registry.client(), dst, image["source"], image["mirror"])
    assert _run(params)["changed"] is False
    assert _run(_params(source_image=source["catalog"], to_dir=str(layout), select=SELECT,
                        docker_config=auth["docker_config"], ca_file=auth["ca_file"]))["changed"] is False


def test_platforms_copy_sparse_indexes(source, auth, registry, token_registry, tmp_path):
    """platforms=linux/arm64: the operator's two-platform index goes into a directory unchanged (its digest, which
    the catalog names, stays valid) with its arm64 image only; Docker's distribution registry (the mirror) refuses
    such an index, and the failure says so."""
    layout = tmp_path / "arm64"
    common = dict(source_image=source["catalog"], select=SELECT, platforms=["linux/arm64"], docker_config=auth["docker_config"], ca_file=auth["ca_file"])
    to_disk = _run(_params(to_dir=str(layout), **common))
    operator = [i for i in to_disk["images"] if i["source"] == source["operator"]]
    assert [i["digest"] for i in operator] == [source["operator"].split("@")[1]], to_disk["images"]
    blobs = layout / "blobs" / "sha256"
    children = json.loads((blobs / source["operator"].split(":")[-1]).read_bytes())["manifests"]
    kept = {c["platform"]["architecture"]: (blobs / c["digest"].split(":")[1]).is_file() for c in children}
    assert kept == {"arm64": True, "amd64": False}, kept
    amd64_digest = [c["digest"] for c in children if c["platform"]["architecture"] == "amd64"][0]
    amd64 = json.loads(registry.client().get_manifest("kubeforge/operator", amd64_digest)[0])
    assert not (blobs / amd64["layers"][0]["digest"].split(":")[1]).exists()  # its 96 MiB layer was not copied

    mirror = "%s/kubeforge/sparse" % token_registry.host
    with pytest.raises(MirrorError) as refused:
        _run(_params(mirror=mirror, registry_username="pusher", registry_password=auth["registry_password"], **common))
    assert "a sparse index" in str(refused.value) and "kubeforge/operator" in str(refused.value), str(refused.value)
    failed = refused.value.result["failed"]
    assert [f["source"] for f in failed] == [source["operator"]], failed

    bad = {**common, "platforms": ["arm64"]}
    with pytest.raises(MirrorError, match="platforms: invalid platform 'arm64'"):
        _run(_params(to_dir=str(tmp_path / "bad"), **bad))


def test_mirror_errors(source, auth, token_registry, tmp_path):
    dst = token_registry.client()
    bad = dict(SELECT, packages=[dict(SELECT["packages"][0], name="absent")])
    with pytest.raises(FilterError, match="package absent is not in the catalog"):
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=bad, **auth))
    assert dst.head_manifest("kubeforge/bad/kubeforge/demo-bundle", "latest") is None

    with pytest.raises(MirrorError, match="blocked_images: '\\(' is not a valid regular expression"):
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=SELECT,
                     blocked_images=["("], **auth), check_mode=True)
    # a blocked image is left out of the plan (and so of the copy and the mirror sets)
    blocked = _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=SELECT,
                           blocked_images=["/kubeforge/helper:"], **auth), check_mode=True)
    assert blocked["blocked"] == [source["helper"]] and len(blocked["images"]) == 4
    assert source["helper"] not in [i["source"] for i in blocked["images"]]

    # a mirror that cannot be read: nothing is copied, every image is named
    with pytest.raises(MirrorError, match="nothing was copied: 5 image.s. could not be looked up") as unreadable:
        _run(_params(source_image=source["catalog"], mirror="%s/denied" % token_registry.host, select=SELECT, **auth))
    assert "insufficient_scope" in str(unreadable.value)

    # reader may read the mirror but not push: every copy is refused, each reported, nothing secret shown
    reader = dict(auth, registry_username="reader", registry_password=token_registry.tokens.users["reader"])
    with pytest.raises(MirrorError) as refused:
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/refused" % token_registry.host,
                     select=SELECT, **reader))
    message = str(refused.value)
    assert "5 image(s) could not be copied (0 copied)" in message and "run again" in message
    assert len(refused.value.result["failed"]) == 5
    assert {i["state"] for i in refused.value.result["images"]} == {"failed"}
    assert reader["registry_password"] not in message + json.dumps(refused.value.result)


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    kubeforge.operators.catalog_mirror:
      source_image: "{{ catalog }}"
      mirror: "{{ mirror }}"
      select: {packages: [{name: demo, max_version: 1.0.0, min_version: 1.0.0}]}
      docker_config: "{{ docker_config }}"
      ca_file: "{{ ca_file }}"
      registry_username: pusher
      registry_password: "{{ password }}"
  tasks:
    - name: plan
      kubeforge.operators.catalog_mirror:
      check_mode: true
      register: plan
    - name: mirror
      kubeforge.operators.catalog_mirror:
        manifests_dir: "{{ out_dir }}/manifests"
        resource_name: mirrored-operators
      register: mirrored
    - name: again
      kubeforge.operators.catalog_mirror:
        manifests_dir: "{{ out_dir }}/manifests"
        resource_name: mirrored-operators
      register: again
    - name: a selection with from_dir is refused
      kubeforge.operators.catalog_mirror:
        source_image: "{{ omit }}"
        from_dir: "{{ out_dir }}"
      register: refused
      ignore_errors: true
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ {'plan': plan, 'mirrored': mirrored, 'again': again, 'refused': refused} | to_json }}"
        mode: "0600"
"""


def test_module_via_ansible_playbook(source, auth, token_registry, tmp_path, run_playbook):
    returncode, output = run_playbook(PLAYBOOK, {
        "catalog": source["catalog"], "mirror": "%s/kubeforge/play" % token_registry.host,
        "docker_config": auth["docker_config"], "ca_file": auth["ca_file"], "password": auth["registry_password"],
        "out_dir": str(tmp_path)})
    assert returncode == 0, output
    assert auth["registry_password"] not in output
    res = json.loads((tmp_path / "results.json").read_text())
    plan, mirrored, again, refused = (res[k] for k in ("plan", "mirrored", "again", "refused"))
    # demo 1.0.0 only: the catalog, one bundle, the operator index (no helper: 1.0.0 does not name it)
    assert plan["changed"] is True and plan["totals"]["images"] == 3 and plan["totals"]["present"] == 0
    assert mirrored["changed"] is True and mirrored["totals"]["copied"] == 3
    assert mirrored["resources"]["catalog_source"]["metadata"] == {"name": "mirrored-operators", "namespace": "openshift-marketplace"}
    assert mirrored["resources"]["image_tag_mirror_set"] is None
    assert sorted(os.listdir(tmp_path / "manifests")) == ["catalogsource.yaml", "clustercatalog.yaml",
                                                          "imagedigestmirrorset.yaml", "mapping.txt"]
    assert again["changed"] is False and again["totals"]["present"] == 3
    assert refused["failed"] is True and "select has no effect with from_dir" in refused["msg"]


def test_the_registry_refuses_an_upload_of_another_digest(token_registry):
    """What lets a registry-to-registry copy skip hashing on our side: the registry checks every upload's digest."""
    client = token_registry.client()
    claimed = "sha256:" + hashlib.sha256(b"what the source said").hexdigest()
    with pytest.raises(RegistryError, match="DIGEST_INVALID"):
        client.upload_blob_stream("kubeforge/digest-check", claimed, 9, io.BytesIO(b"tampered!"))
    assert not client.blob_exists("kubeforge/digest-check", claimed)
