"""catalog.image: the catalog_image module's rules without a module or a registry (option checks, Dockerfile text,
which client and credentials the base pull and the push use, result facts)."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import image as catalog_image
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_catalog_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

PARAMS = {"registry_username": "u", "registry_password": "secret", "docker_config": "/dc.json", "ca_file": None,
          "validate_certs": True, "plain_http": False, "timeout": 60}


class FakeClientFactory:
    def __init__(self):
        self.calls = []

    def __call__(self, ref, **kwargs):
        client = {"registry": ref.registry, "kwargs": kwargs}
        self.calls.append(client)
        return client


@pytest.mark.parametrize("params,msg", [
    ({"labels": {"operators.operatorframework.io.index.configs.v1": "/elsewhere"}}, "contradicts where the catalog is"),
    ({"path": "/nonexistent/fbc"}, "path /nonexistent/fbc is not a directory"),
])
def test_check_image_params(tmp_path, params, msg):
    with pytest.raises(PublishError, match=msg):
        catalog_image.check_image_params(dict({"path": str(tmp_path)}, **params))
    catalog_image.check_image_params({"path": str(tmp_path), "dockerfile_only": True})


def test_catalog_dockerfile_names_the_directory(tmp_path):
    (tmp_path / "v4.20").mkdir()
    text = catalog_image.catalog_dockerfile(str(tmp_path / "v4.20") + "/", "scratch", "foo", {"k": 1})
    assert "ADD v4.20 /configs\n" in text and 'LABEL "k"="1"\n' in text and "FROM foo as builder\n" in text


@pytest.mark.parametrize("target,ref,expected", [
    ("quay.io/a/b:v1", "quay.io/operator-framework/opm:latest", True),
    ("Quay.IO/a/b:v1", "quay.io/c/d", True),
    ("quay.io/a/b:v1", "ghcr.io/c/d", False),
    ("127.0.0.1:5000/a/b", "127.0.0.1:5001/a/b", False),
    ("busybox", "index.docker.io/library/alpine", True),
    (None, "quay.io/c/d", False),
])
def test_explicit_credentials_apply(target, ref, expected):
    target = parse_reference(target) if target else None
    assert catalog_image.explicit_credentials_apply(target, parse_reference(ref)) is expected


def test_registry_clients_share_one_client_on_the_same_registry():
    factory = FakeClientFactory()
    base, push = catalog_image.registry_clients(dict(PARAMS, push=True), parse_reference("quay.io/a/b:v1"),
                                                parse_reference("quay.io/c/opm:latest"), client_factory=factory)
    assert base is push and len(factory.calls) == 1
    assert push["kwargs"]["username"] == "u" and push["kwargs"]["password"] == "secret"


def test_registry_clients_other_registry_gets_no_explicit_credentials():
    factory = FakeClientFactory()
    base, push = catalog_image.registry_clients(dict(PARAMS, push=True), parse_reference("quay.io/a/b:v1"),
                                                parse_reference("ghcr.io/c/opm:latest"), client_factory=factory)
    assert base is not push and base["registry"] == "ghcr.io" and push["registry"] == "quay.io"
    assert "username" not in base["kwargs"] and "password" not in base["kwargs"]
    assert base["kwargs"]["docker_config"] == "/dc.json"
    assert push["kwargs"]["password"] == "secret"


def test_registry_clients_without_push():
    factory = FakeClientFactory()
    target = parse_reference("quay.io/a/b:v1")
    # same registry, no push (OCI layout only): the base pull gets the explicit credentials
    base, push = catalog_image.registry_clients(dict(PARAMS, push=False), target, parse_reference("quay.io/c/d"),
                                                client_factory=factory)
    assert push is None and base["kwargs"]["password"] == "secret"
    # no target at all: docker config only
    base, push = catalog_image.registry_clients(dict(PARAMS, push=False), None, parse_reference("quay.io/c/d"),
                                                client_factory=factory)
    assert push is None and "password" not in base["kwargs"]
    # scratch: no base client
    assert catalog_image.registry_clients(dict(PARAMS, push=False), target, None, client_factory=factory) == (None, None)


def test_image_facts_and_layout_tag(tmp_path):
    (tmp_path / "fbc").mkdir()
    (tmp_path / "fbc" / "catalog.yaml").write_text("schema: olm.package\nname: p\n")
    img = build_catalog_image(str(tmp_path / "fbc"), labels={"a": 1})
    target = parse_reference("quay.io/a/b:v1")
    facts = catalog_image.image_facts(img, target)
    assert facts["image"] == "quay.io/a/b:v1@" + img.digest and facts["digest"] == img.digest
    assert facts["labels"]["a"] == "1" and facts["manifest"] == img.manifest and facts["config"] == img.config
    assert "image" not in catalog_image.image_facts(img)
    assert catalog_image.layout_tag(target) == "v1"
    assert catalog_image.layout_tag(parse_reference("quay.io/a/b@sha256:" + "a" * 64)) == "latest"
    assert catalog_image.layout_tag(None) == "latest"
