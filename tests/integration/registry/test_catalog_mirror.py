"""catalog_mirror between two real registries: the source (htpasswd) holding a catalog, bundle images, a two-platform
operator image index with a 96 MiB layer and a tag-only helper image; the mirror (token auth, only ``kubeforge/*``
writable). Proves the plan, the copy by digest (every manifest and blob checked against the source), the rebuilt
catalog, the cluster resources, idempotence, resuming after SIGKILL mid-copy, the round trip through a directory
(returning what the direct run returns), whose credentials the options are, the errors for a bad selection, a
placeholder image and a refused push (failed_images through Ansible), and the role serving the mirrored catalog
with the play's module_defaults. Every returned field the documentation describes is asserted here or, for a run
from a directory, in tests/unit/plugins/module_utils/catalog/test_catalog_mirror_run.py."""

import base64
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lib.polling import poll_until
from lib.runners import module_params

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
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference
from ansible_collections.kubeforge.operators.plugins.modules import catalog_mirror

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
BIG = 96 * 1024 * 1024
# a registry nothing listens on (connection refused at once, no DNS query)
PLACEHOLDER = "127.0.0.1:1/kubeforge/placeholder-operator:v0.1.0"


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
    config = json.dumps({"architecture": arch, "os": os_name, "rootfs": {"type": "layers", "diff_ids": [layer]}}, sort_keys=True).encode()
    client.upload_blob(repo, config)
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + hashlib.sha256(config).hexdigest(), "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer, "size": BIG}],
        },
        sort_keys=True,
    ).encode()
    digest = client.put_manifest(repo, "sha256:" + hashlib.sha256(manifest).hexdigest(), manifest, OCI_MANIFEST)
    return {"mediaType": OCI_MANIFEST, "digest": digest, "size": len(manifest), "platform": {"architecture": arch, "os": os_name}}


def _bundle(package, version, image, related, replaces=None):
    props = [{"type": "olm.package", "value": {"packageName": package, "version": version}}]
    blob = {
        "schema": "olm.bundle",
        "name": "%s.v%s" % (package, version),
        "package": package,
        "image": image,
        "properties": props,
        "relatedImages": [{"name": "r%d" % i, "image": r} for i, r in enumerate(related)],
    }
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
    bundles, entries = {}, {"demo": [], "other": [], "placeholder": [], "gone": []}
    for package, versions in (("demo", ("1.0.0", "1.1.0", "2.0.0")), ("other", ("0.1.0",)), ("placeholder", ("0.1.0",)), ("gone", ("0.1.0",))):
        previous = None
        for version in versions:
            image = _push_dir_image(client, "kubeforge/%s-bundle" % package, version, tmp, {"version": version, "package": package})
            ref = "%s/kubeforge/%s-bundle@%s" % (host, package, image.digest)
            related = [operator] + ([helper] if version == "2.0.0" else [])
            if package == "placeholder":  # an operator image no registry serves, as test bundles name them
                related = [PLACEHOLDER]
            if package == "gone":  # a bundle image on a registry that is gone
                ref = ref.replace(host, "127.0.0.1:1")
            blob, entry = _bundle(package, version, ref, related, previous)
            bundles[blob["name"]] = blob
            entries[package].append(entry)
            previous = version
    fbc = tmp / "fbc"
    for package in entries:
        (fbc / package).mkdir(parents=True)
        docs = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries[package]},
        ]
        docs += [b for b in bundles.values() if b["package"] == package]
        (fbc / package / "catalog.json").write_text("\n".join(json.dumps(d) for d in docs))
    base = BaseImage.pull(opm_base[0], client)
    catalog = build_catalog_image(str(fbc), base=base)
    push_image(client, "%s/kubeforge/index:v1" % host, catalog)
    kept = [b for b in bundles.values() if b["name"] in ("demo.v1.1.0", "demo.v2.0.0")]
    return {
        "catalog": "%s/kubeforge/index:v1" % host,
        "catalog_digest": catalog.digest,
        "operator": operator,
        "helper": helper,
        "kept": kept,
        "host": host,
        "catalog_by_digest": "%s/kubeforge/index@%s" % (host, catalog.digest),
    }


@pytest.fixture(scope="module")
def auth(registry, token_registry, tmp_path_factory):
    """A docker config for the source registry and one CA bundle for both registries."""
    tmp = tmp_path_factory.mktemp("mirror-auth")
    config = tmp / "config.json"
    token = base64.b64encode(("%s:%s" % (registry.username, registry.password)).encode()).decode()
    config.write_text(json.dumps({"auths": {registry.host: {"auth": token}}}))
    bundle = tmp / "ca.pem"
    bundle.write_text(open(registry.ca_file).read() + open(token_registry.ca_file).read())
    return {"docker_config": str(config), "ca_file": str(bundle), "registry_username": "pusher", "registry_password": token_registry.tokens.users["pusher"]}


def _params(**kw):
    return module_params(catalog_mirror.argspec(), **kw)


SELECT = {
    "full": False,
    "packages": [{"name": "demo", "min_version": "1.1.0", "max_version": None, "default_channel": None, "installed_version": None, "channels": []}],
}


def _run(params, check_mode=False):
    return run_mirror(params, check_mode=check_mode)


def _assert_one_form(result, mirror):
    """Every name in a result has one form: the copies in the form of their sources (by digest only when the source
    names a digest, else by tag), the catalog by digest only; the mapping pairs them, the resources name the
    catalog as catalog.image."""
    for image in result["images"]:
        ref = parse_reference(image["source"])
        if ref.digest:
            assert image["mirror"] == "%s/%s@%s" % (mirror, ref.repository, ref.digest) and ref.digest == image["digest"], image
        else:
            assert image["mirror"] == "%s/%s:%s" % (mirror, ref.repository, ref.tag), image
    catalog = result["catalog"]
    assert catalog["image"] == "%s/kubeforge/index@%s" % (mirror, catalog["digest"]), catalog
    assert result["mapping"] == sorted("%s=%s" % (i["source"], i["mirror"]) for i in result["images"])
    assert not any(catalog["digest"] in line for line in result["mapping"])  # the rebuilt catalog is no copy
    assert result["resources"]["catalog_source"]["spec"]["image"] == catalog["image"]
    assert result["resources"]["cluster_catalog"]["spec"]["source"]["image"]["ref"] == catalog["image"]


def _fields(images, *names):
    """The ``names`` fields of each image, as tuples."""
    return [tuple(image[name] for name in names) for image in images]


def _assert_copied(src_client, dst_client, image):
    """Every manifest and blob of the mirrored image is in the mirror with the source's bytes (manifests) or digest."""
    src_repo = parse_reference(image["source"]).repository
    dst_repo = parse_reference(image["mirror"]).repository
    digest = image["digest"]
    data = src_client.get_manifest(src_repo, digest)[0]
    assert dst_client.get_manifest(dst_repo, digest)[0] == data
    doc = json.loads(data)
    for child in doc.get("manifests") or ():
        child_data = src_client.get_manifest(src_repo, child["digest"])[0]
        assert dst_client.get_manifest(dst_repo, child["digest"])[0] == child_data
        for blob in [json.loads(child_data)["config"]] + json.loads(child_data)["layers"]:
            assert dst_client.blob_exists(dst_repo, blob["digest"]), (image["mirror"], blob)
    for blob in ([doc["config"]] + doc["layers"]) if "config" in doc else ():
        assert dst_client.blob_exists(dst_repo, blob["digest"]), (image["mirror"], blob)


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
    script.write_text(
        "import json, sys\nfrom ansible_collections.kubeforge.operators.plugins.module_utils.catalog."
        "mirror_run import run_mirror\nrun_mirror(json.load(open(sys.argv[1])))\n"
    )
    # this checkout's collection and the virtualenv, nothing else of this process's sys.path
    collections = str(Path(__file__).resolve().parents[3] / ".build" / "collections")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([collections] + [p for p in sys.path if p.endswith("site-packages")]))
    # SIGKILL leaves the run's work directory behind: in tmp_path, not in the machine's /tmp
    env["TMPDIR"] = str(tmp_path)
    output = tmp_path / "child.log"
    with open(output, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "params.json")], env=env, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
        )
    uploads = token_registry.root / "storage" / "docker" / "registry" / "v2" / "repositories"
    try:
        poll_until(lambda: proc.poll() is not None or _upload_under_way(uploads), 120, interval=0.01, describe="the mirror run's first upload")
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            return None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return "exit %s: %s" % (proc.returncode, output.read_text()[-2000:])


def test_mirror_plan_copy_resume_and_resources(source, auth, registry, token_registry, tmp_path):
    mirror = "%s/kubeforge/mirror" % token_registry.host
    params = _params(source_image=source["catalog"], mirror=mirror, select=SELECT, manifests_dir=str(tmp_path / "manifests"), **auth)
    dst = token_registry.client()
    src = registry.client()

    plan = _run(params, check_mode=True)
    assert plan["changed"] is True
    assert [i["state"] for i in plan["images"]] == ["missing"] * 5
    sources = [i["source"] for i in plan["images"]]
    # the source catalog first, by the digest read: it is copied by digest (its layers are the rebuilt one's base)
    assert sources[0] == source["catalog_by_digest"] == plan["catalog"]["source"]
    assert plan["images"][0]["bundles"] == [] and plan["images"][1]["bundles"]
    assert set(sources[1:]) == {b["image"] for b in source["kept"]} | {source["operator"], source["helper"]}
    assert plan["totals"]["bytes_to_copy"] == plan["totals"]["bytes"] == sum(i["size"] for i in plan["images"]) > 2 * BIG
    assert {k: plan["totals"][k] for k in ("images", "present", "copied", "failed")} == {"images": 5, "present": 0, "copied": 5, "failed": 0}
    assert plan["catalog"]["packages"] == ["demo"] and plan["catalog"]["image"] == ""  # not pushed in check mode
    assert plan["blocked"] == [] and "failed_images" not in plan
    assert dst.head_manifest("kubeforge/mirror/kubeforge/index", "v1") is None  # check mode wrote nothing
    assert not (tmp_path / "manifests").exists()

    ended = _kill_mid_copy(params, token_registry, tmp_path)
    assert ended is None, "the copy ended before a big blob was under way: %s" % ended
    assert dst.head_manifest("kubeforge/mirror/kubeforge/index", "v1") is None  # the catalog is pushed last

    first = _run(params)
    assert first["changed"] is True
    assert {i["state"] for i in first["images"]} <= {"copied", "present"}
    for image in first["images"]:
        _assert_copied(src, dst, image)
    totals = first["totals"]
    assert totals["copied"] >= 1 and totals["copied"] + totals["present"] == totals["images"] == 5 and totals["failed"] == 0
    assert totals["copied"] == sum(i["state"] == "copied" for i in first["images"])
    assert totals["blobs_uploaded"] >= 1 and totals["blobs_mounted"] >= 0
    _assert_one_form(first, mirror)
    assert first["images"][0]["mirror"] == "%s/kubeforge/index@%s" % (mirror, source["catalog_digest"])

    # the rebuilt catalog: only the kept bundles, served without opm's stale cache, over the source catalog's layers;
    # by digest only in the result, and under the source's tag in the mirror
    catalog = first["catalog"]
    assert catalog["image"] == "%s/kubeforge/index@%s" % (mirror, catalog["digest"])
    assert catalog["source"] == source["catalog_by_digest"] and catalog["packages"] == ["demo"]
    assert dst.head_manifest("kubeforge/mirror/kubeforge/index", "v1")["digest"] == catalog["digest"]
    fbc, pulled = pull_catalog(catalog["image"], str(tmp_path / "pulled"), client=dst)
    assert sorted(os.listdir(fbc)) == ["demo"]
    names = sorted(b["name"] for b in load(fbc).bundles)
    assert names == ["demo.v1.1.0", "demo.v2.0.0"]
    assert pulled.config["config"]["Cmd"][-1] == "--cache-enforce-integrity=false"
    source_layers = [layer["digest"] for layer in json.loads(src.get_manifest("kubeforge/index", "v1")[0])["layers"]]
    assert [layer["digest"] for layer in pulled.manifest["layers"]][: len(source_layers)] == source_layers

    resources = first["resources"]
    idms = resources["image_digest_mirror_set"]["spec"]["imageDigestMirrors"]
    host = source["host"]
    assert idms == [
        {"source": "%s/kubeforge/demo-bundle" % host, "mirrors": ["%s/kubeforge/demo-bundle" % mirror]},
        {"source": "%s/kubeforge/operator" % host, "mirrors": ["%s/kubeforge/operator" % mirror]},
    ]
    assert resources["image_tag_mirror_set"]["spec"]["imageTagMirrors"] == [
        {"source": "%s/kubeforge/helper" % host, "mirrors": ["%s/kubeforge/helper" % mirror]}
    ]
    catalog_image = "%s/kubeforge/index@%s" % (mirror, catalog["digest"])
    assert resources["catalog_source"] == {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "index-v1", "namespace": "openshift-marketplace"},
        "spec": {"sourceType": "grpc", "image": catalog_image},
    }
    assert resources["cluster_catalog"] == {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterCatalog",
        "metadata": {"name": "index-v1"},
        "spec": {"source": {"type": "Image", "image": {"ref": catalog_image}}},
    }
    assert resources["image_digest_mirror_set"]["metadata"] == {"name": "index-v1"}
    assert "%s=%s" % (source["operator"], source["operator"].replace(host, mirror)) in first["mapping"]
    assert "%s=%s/kubeforge/helper:latest" % (source["helper"], mirror) in first["mapping"]  # a tag maps to the tag
    assert "%s=%s/kubeforge/index@%s" % (source["catalog_by_digest"], mirror, source["catalog_digest"]) in first["mapping"]
    written = sorted(os.listdir(tmp_path / "manifests"))
    assert written == ["catalogsource.yaml", "clustercatalog.yaml", "imagedigestmirrorset.yaml", "imagetagmirrorset.yaml", "mapping.txt"]
    assert sorted(os.path.basename(f) for f in first["files"]) == written
    assert (tmp_path / "manifests" / "mapping.txt").read_text().splitlines() == first["mapping"]
    assert yaml.safe_load((tmp_path / "manifests" / "clustercatalog.yaml").read_text()) == resources["cluster_catalog"]

    again = _run(params)
    assert again["changed"] is False
    assert [i["state"] for i in again["images"]] == ["present"] * 5
    assert again["catalog"] == catalog and again["mapping"] == first["mapping"] and again["resources"] == resources
    assert again["totals"]["copied"] == 0 and again["totals"]["present"] == 5
    assert auth["registry_password"] not in json.dumps([first, again])


def test_mirror_through_a_directory(source, auth, registry, token_registry, tmp_path):
    """to_dir then from_dir: the directory holds the 5 images and the rebuilt catalog; the run from it returns what a
    direct run into the same mirror returns - images, totals, catalog, mapping and resources alike. The connected
    side reads the source with the registry_username it was always given with to_dir."""
    layout = tmp_path / "transfer"
    to_disk = _run(
        _params(
            source_image=source["catalog"],
            to_dir=str(layout),
            select=SELECT,
            ca_file=auth["ca_file"],
            registry_username=registry.username,
            registry_password=registry.password,
        )
    )
    assert to_disk["changed"] is True and len(to_disk["images"]) == 5 and to_disk["totals"]["copied"] == 5
    index = json.loads((layout / "index.json").read_text())
    names = sorted(m["annotations"]["org.opencontainers.image.ref.name"] for m in index["manifests"])
    assert "%s/kubeforge/index:v1" % source["host"] in names and len(names) == 6  # 5 images and the rebuilt catalog
    assert source["catalog_by_digest"] in names and source["helper"] in names
    (rebuilt,) = [m for m in index["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == "%s/kubeforge/index:v1" % source["host"]]
    assert rebuilt["annotations"]["io.kubeforge.operators.mirror.source-catalog"] == source["catalog_by_digest"]
    assert rebuilt["annotations"]["io.kubeforge.operators.mirror.catalog"] == "true"
    # in a directory, oci:<dir>:<index.json name> references (skopeo's and podman's)
    assert [i["mirror"] for i in to_disk["images"]] == ["oci:%s:%s" % (layout, i["source"]) for i in to_disk["images"]]
    assert to_disk["catalog"]["image"] == "oci:%s:%s/kubeforge/index:v1" % (layout, source["host"])
    assert to_disk["catalog"]["source"] == source["catalog_by_digest"] and to_disk["catalog"]["packages"] == ["demo"]
    assert "mapping" not in to_disk and "resources" not in to_disk

    mirror = "%s/kubeforge/airgap" % token_registry.host
    params = _params(
        from_dir=str(layout),
        mirror=mirror,
        ca_file=auth["ca_file"],
        manifests_dir=str(tmp_path / "from-dir"),
        registry_username="pusher",
        registry_password=auth["registry_password"],
    )
    pushed = _run(params)
    assert pushed["changed"] is True
    assert pushed["catalog"]["digest"] == to_disk["catalog"]["digest"]
    dst = token_registry.client()
    assert dst.head_manifest("kubeforge/airgap/kubeforge/index", "v1")["digest"] == to_disk["catalog"]["digest"]
    for image in pushed["images"]:
        _assert_copied(registry.client(), dst, image)
    _assert_one_form(pushed, mirror)
    assert pushed["catalog"]["packages"] == ["demo"] and pushed["catalog"]["source"] == source["catalog_by_digest"]
    assert pushed["totals"]["images"] == 5 and pushed["totals"]["copied"] == 5 and pushed["totals"]["failed"] == 0

    # a direct run into the same mirror (in check mode: all of it is there) returns the same
    direct = _run(_params(source_image=source["catalog"], mirror=mirror, select=SELECT, **auth), check_mode=True)
    assert direct["changed"] is False
    # the same images, whatever the order of those of one source (the catalog's, or the directory's)
    assert sorted(_fields(direct["images"], "source", "mirror", "digest", "size")) == sorted(_fields(pushed["images"], "source", "mirror", "digest", "size"))
    assert direct["images"][0]["source"] == pushed["images"][0]["source"] == source["catalog_by_digest"]
    assert direct["catalog"] == pushed["catalog"]
    assert direct["mapping"] == pushed["mapping"] and direct["resources"] == pushed["resources"]
    assert {k: direct["totals"][k] for k in ("images", "bytes")} == {k: pushed["totals"][k] for k in ("images", "bytes")}

    assert _run(params)["changed"] is False
    assert (
        _run(_params(source_image=source["catalog"], to_dir=str(layout), select=SELECT, docker_config=auth["docker_config"], ca_file=auth["ca_file"]))[
            "changed"
        ]
        is False
    )


def test_source_and_mirror_credentials(source, auth, registry, token_registry, tmp_path):
    """source_registry_username/password reach the source catalog's registry, registry_username/password the
    mirror's; neither is sent to the other registry. Without the source's, its registry refuses the read."""
    mirror = "%s/kubeforge/creds" % token_registry.host
    mirror_auth = dict(registry_username="pusher", registry_password=auth["registry_password"], ca_file=auth["ca_file"])
    plan = _run(
        _params(
            source_image=source["catalog"],
            mirror=mirror,
            select=SELECT,
            source_registry_username=registry.username,
            source_registry_password=registry.password,
            **mirror_auth,
        ),
        check_mode=True,
    )
    assert plan["totals"]["images"] == 5 and plan["catalog"]["source"] == source["catalog_by_digest"]
    # the mirror's credentials are not the source's: without the source pair (and no auth file) the read is refused
    (tmp_path / "empty.json").write_text('{"auths": {}}')
    with pytest.raises(MirrorError, match="authentication required .* no credentials were given") as refused:
        _run(_params(source_image=source["catalog"], mirror=mirror, select=SELECT, docker_config=str(tmp_path / "empty.json"), **mirror_auth), check_mode=True)
    assert registry.host in str(refused.value) and "source_registry_username/source_registry_password" in str(refused.value), str(refused.value)
    with pytest.raises(MirrorError, match="with to_dir, registry_username is the source catalog registry's"):
        _run(_params(source_image=source["catalog"], to_dir=str(tmp_path / "d"), registry_username="a", source_registry_username="b"))


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
    failed = refused.value.result["failed_images"]
    assert [f["source"] for f in failed] == [source["operator"]], failed
    totals = refused.value.result["totals"]
    # the message's count is totals.copied: the images that did copy (the catalog, the bundles, the helper)
    assert str(refused.value).startswith("1 image(s) could not be copied (%d copied)" % totals["copied"]), str(refused.value)
    assert totals["copied"] == 4 and totals["failed"] == 1
    assert [i["state"] for i in refused.value.result["images"] if i["source"] == source["operator"]] == ["failed"]

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
        _run(
            _params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=SELECT, blocked_images=["("], **auth),
            check_mode=True,
        )
    # a blocked image is left out of the plan (and so of the copy and the mirror sets)
    blocked = _run(
        _params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=SELECT, blocked_images=["/kubeforge/helper:"], **auth),
        check_mode=True,
    )
    assert blocked["blocked"] == [source["helper"]] and len(blocked["images"]) == 4
    assert source["helper"] not in [i["source"] for i in blocked["images"]]

    # a mirror that cannot be read: nothing is copied, every image is named (and blocked_images is not suggested)
    with pytest.raises(MirrorError, match="nothing was copied: 5 image.s. could not be looked up") as unreadable:
        _run(_params(source_image=source["catalog"], mirror="%s/denied" % token_registry.host, select=SELECT, **auth))
    assert "insufficient_scope" in str(unreadable.value) and "blocked_images" not in str(unreadable.value)
    assert len(unreadable.value.result["failed_images"]) == 5

    # a placeholder image no registry serves: named, with the blocked_images pattern that leaves it out
    placeholder = {"full": False, "packages": [dict(SELECT["packages"][0], name="placeholder", min_version=None)]}
    with pytest.raises(MirrorError, match="nothing was copied: 1 image.s. could not be looked up") as missing:
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=placeholder, **auth), check_mode=True)
    assert str(missing.value).endswith("leave them out with blocked_images: ['^127[.]0[.]0[.]1:1/']"), str(missing.value)
    assert [f["source"] for f in missing.value.result["failed_images"]] == [PLACEHOLDER]
    left_out = _run(
        _params(
            source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=placeholder, blocked_images=["^127[.]0[.]0[.]1:1/"], **auth
        ),
        check_mode=True,
    )
    assert left_out["blocked"] == [PLACEHOLDER] and len(left_out["images"]) == 2
    # a bundle image that cannot be read: OLM unpacks it, so no blocked_images pattern is suggested
    gone = {"full": False, "packages": [dict(SELECT["packages"][0], name="gone", min_version=None)]}
    with pytest.raises(MirrorError, match="nothing was copied: 1 image.s. could not be looked up") as unreadable_bundle:
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/bad" % token_registry.host, select=gone, **auth), check_mode=True)
    assert "127.0.0.1:1/kubeforge/gone-bundle@" in str(unreadable_bundle.value) and "blocked_images" not in str(unreadable_bundle.value)

    # reader may read the mirror but not push: every copy is refused, each reported, nothing secret shown
    reader = dict(auth, registry_username="reader", registry_password=token_registry.tokens.users["reader"])
    with pytest.raises(MirrorError) as refused:
        _run(_params(source_image=source["catalog"], mirror="%s/kubeforge/refused" % token_registry.host, select=SELECT, **reader))
    message = str(refused.value)
    assert "5 image(s) could not be copied (0 copied)" in message and "run again" in message
    assert len(refused.value.result["failed_images"]) == 5
    assert refused.value.result["totals"]["copied"] == 0 and refused.value.result["totals"]["failed"] == 5
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
    - name: a mirror that refuses the push
      kubeforge.operators.catalog_mirror:
        mirror: "{{ mirror }}-refused"
        registry_username: reader
        registry_password: "{{ reader_password }}"
      register: push_refused
      ignore_errors: true
    - name: a selection with from_dir is refused
      kubeforge.operators.catalog_mirror:
        source_image: "{{ omit }}"
        from_dir: "{{ out_dir }}"
      register: refused
      ignore_errors: true
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ {'plan': plan, 'mirrored': mirrored, 'again': again, 'refused': refused, 'push_refused': push_refused} | to_json }}"
        mode: "0600"
"""


def test_module_via_ansible_playbook(source, auth, token_registry, tmp_path, run_playbook):
    returncode, output = run_playbook(
        PLAYBOOK,
        {
            "catalog": source["catalog"],
            "mirror": "%s/kubeforge/play" % token_registry.host,
            "docker_config": auth["docker_config"],
            "ca_file": auth["ca_file"],
            "password": auth["registry_password"],
            "reader_password": token_registry.tokens.users["reader"],
            "out_dir": str(tmp_path),
        },
    )
    assert returncode == 0, output
    assert auth["registry_password"] not in output and token_registry.tokens.users["reader"] not in output
    res = json.loads((tmp_path / "results.json").read_text())
    plan, mirrored, again, refused = (res[k] for k in ("plan", "mirrored", "again", "refused"))
    # through Ansible, the failed images reach the user (a module's own "failed" key would be Ansible's boolean)
    push_refused = res["push_refused"]
    assert push_refused["failed"] is True and len(push_refused["failed_images"]) == 3, push_refused
    assert {f["source"] for f in push_refused["failed_images"]} == {i["source"] for i in push_refused["images"]}
    assert "3 image(s) could not be copied (0 copied)" in push_refused["msg"] and push_refused["totals"]["copied"] == 0
    # demo 1.0.0 only: the catalog, one bundle, the operator index (no helper: 1.0.0 does not name it)
    assert plan["changed"] is True and plan["totals"]["images"] == 3 and plan["totals"]["present"] == 0
    assert mirrored["changed"] is True and mirrored["totals"]["copied"] == 3
    assert mirrored["resources"]["catalog_source"]["metadata"] == {"name": "mirrored-operators", "namespace": "openshift-marketplace"}
    assert mirrored["resources"]["image_tag_mirror_set"] is None
    assert sorted(os.listdir(tmp_path / "manifests")) == ["catalogsource.yaml", "clustercatalog.yaml", "imagedigestmirrorset.yaml", "mapping.txt"]
    assert again["changed"] is False and again["totals"]["present"] == 3
    assert refused["failed"] is True and "select has no effect with from_dir" in refused["msg"]


def test_the_registry_refuses_an_upload_of_another_digest(token_registry):
    """What lets a registry-to-registry copy skip hashing on our side: the registry checks every upload's digest."""
    client = token_registry.client()
    claimed = "sha256:" + hashlib.sha256(b"what the source said").hexdigest()
    with pytest.raises(RegistryError, match="DIGEST_INVALID"):
        client.upload_blob_stream("kubeforge/digest-check", claimed, 9, io.BytesIO(b"tampered!"))
    assert not client.blob_exists("kubeforge/digest-check", claimed)


ROLE_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubeforge.operators.operators:
      kubeconfig: "{{ play_kubeconfig }}"
  tasks:
    - name: Mirror and serve through a ClusterCatalog
      ansible.builtin.include_role:
        name: kubeforge.operators.catalog_mirror
      vars:
        catalog_mirror_source_image: "{{ catalog }}"
        catalog_mirror_select: {packages: [{name: demo, min_version: 1.0.0, max_version: 1.0.0}]}
        catalog_mirror_mirror: "{{ mirror }}"
        catalog_mirror_serve: [cluster_catalog]
        catalog_mirror_kubeconfig: "{{ role_kubeconfig }}"
        catalog_mirror_docker_config: "{{ docker_config }}"
        catalog_mirror_ca_file: "{{ ca_file }}"
        catalog_mirror_registry_username: pusher
        catalog_mirror_registry_password: "{{ password }}"
"""


def _kubeconfig(path, server):
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    return str(path)


@pytest.mark.parametrize("role_kubeconfig, server", [(False, "127.0.0.1"), (True, "127.0.0.2")])
def test_role_serves_with_the_plays_module_defaults(source, auth, token_registry, tmp_path, run_playbook, role_kubeconfig, server):
    """The role's serving step takes the cluster from the play's module_defaults for group/kubeforge.operators.operators
    (and from catalog_mirror_kubeconfig over it, when set). Each kubeconfig names an API server that does not listen,
    on another loopback address: the failure names the server the kubeconfig in force names, with its own cause, not
    a missing OLM v1. The report before it prints the catalog by digest and its packages."""
    play = _kubeconfig(tmp_path / "play.kubeconfig", "https://127.0.0.1:1")
    role = _kubeconfig(tmp_path / "role.kubeconfig", "https://127.0.0.2:1") if role_kubeconfig else ""
    mirror = "%s/kubeforge/role" % token_registry.host
    returncode, output = run_playbook(
        ROLE_PLAYBOOK,
        {
            "catalog": source["catalog"],
            "mirror": mirror,
            "play_kubeconfig": play,
            "role_kubeconfig": role,
            "docker_config": auth["docker_config"],
            "ca_file": auth["ca_file"],
            "password": auth["registry_password"],
        },
    )
    assert returncode != 0, output
    assert "Catalog: %s/kubeforge/index@sha256:" % mirror in output and "(demo)" in output, output
    assert "Rebuilt from: %s" % source["catalog_by_digest"] in output, output
    failure = [line for line in output.splitlines() if "Serve the mirrored catalog through a ClusterCatalog" in line or "FAILED!" in line]
    assert "host='%s', port=1" % server in output and "Connection refused" in output, failure or output
    assert "is not installed" not in output and "Invalid kube-config" not in output, output
    assert auth["registry_password"] not in output
