"""The AWX / Ansible Automation Platform execution environment (execution-environment.yml), checked without a
container engine: `ansible-builder create` writes the build context (`make ee`, before this test), and the context's own
introspection script - what the image build runs after installing the collections - is run here on the collection
artifact installed offline next to kubernetes.core, as the galaxy stage of the build would install them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = ROOT / ".build" / "ee"
ARTIFACT = ROOT / ".build" / "dist" / "kubeforge-operators.tar.gz"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def context():
    assert (CONTEXT / "Dockerfile").is_file(), "run `make ee` (ansible-builder create) first"
    return CONTEXT


def test_definition_is_ansible_builder_v3_with_pinned_core_and_runner():
    definition = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
    assert definition["version"] == 3
    deps = definition["dependencies"]
    dev = (ROOT / "requirements-dev.txt").read_text()
    assert deps["ansible_core"]["package_pip"] in dev.splitlines()  # the ansible-core the collection is tested with
    assert deps["ansible_runner"]["package_pip"].startswith("ansible-runner==")
    # a maintained distribution base (not the builder-era quay.io/ansible/python-base), its Python from the distro
    assert definition["images"]["base_image"]["name"] == "quay.io/centos/centos:stream9"
    assert deps["python_interpreter"] == {"package_system": "python3.11", "python_path": "/usr/bin/python3.11"}
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    core = next(c for c in deps["galaxy"]["collections"] if c["name"] == "kubernetes.core")
    assert core["version"] == galaxy["dependencies"]["kubernetes.core"]


def test_context_installs_the_built_collection_and_kubernetes_core(context):
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    names = [c["name"] for c in requirements["collections"]]
    assert "kubernetes.core" in names
    (local,) = [c for c in requirements["collections"] if c.get("type") == "file"]
    copied = context / "_build" / "collections" / Path(local["name"]).name
    assert local["name"].startswith("/build/collections/") and copied.is_file()
    assert copied.read_bytes() == ARTIFACT.read_bytes()
    dockerfile = (context / "Dockerfile").read_text()
    assert "COPY _build /build" in dockerfile and "ansible-galaxy collection install" in dockerfile
    assert "ansible-core==2.19" in dockerfile and "introspect.py introspect" in dockerfile
    assert 'ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"' in dockerfile


def test_introspection_collects_the_collections_dependencies(context, tmp_path):
    collections = tmp_path / "collections"
    subprocess.run(
        [str(VENV_BIN / "ansible-galaxy"), "collection", "install", "--offline", "--force", "-p", str(collections), str(ARTIFACT)],
        check=True,
        capture_output=True,
        text=True,
    )  # noqa: S603
    # kubernetes.core as the build would fetch it from Galaxy (here: the copy the `ansible` package ships)
    from ansible_collections.kubernetes import core

    shutil.copytree(Path(list(core.__path__)[0]), collections / "ansible_collections" / "kubernetes" / "core")
    pip, bindep = tmp_path / "requirements.txt", tmp_path / "bindep.txt"
    subprocess.run(
        [
            sys.executable,
            str(context / "_build" / "scripts" / "introspect.py"),
            "introspect",
            str(collections),
            "--write-pip",
            str(pip),
            "--write-bindep",
            str(bindep),
        ],
        check=True,
        capture_output=True,
        text=True,
    )  # noqa: S603
    python = pip.read_text().splitlines()
    ours = [line.split("#")[0].strip() for line in python if line.endswith("from collection kubeforge.operators")]
    declared = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines() if line.strip() and not line.startswith("#")]
    # PyYAML comes with ansible-core, so ansible-builder leaves it out
    assert sorted(ours) == sorted(r for r in declared if not r.lower().startswith("pyyaml")), python
    assert any(line.endswith("from collection kubernetes.core") for line in python), python
    system = bindep.read_text().splitlines()
    assert "skopeo [image-tools]  # from collection kubeforge.operators" in system, system
