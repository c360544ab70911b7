# Fixtures for the kubernetes.core adapter tests (plugins/module_utils/k8s).
import functools
import os

import kubernetes
import pytest
import yaml
from lib.fakes import FakeModule

AUTH_ENV_PREFIX = "K8S_AUTH_"


@pytest.fixture(autouse=True)
def clean_k8s_env(monkeypatch):
    """No K8S_AUTH_* / KUBECONFIG leaking in from the developer's shell, and a pristine default client config."""
    for name in list(os.environ):
        if name.startswith(AUTH_ENV_PREFIX) or name == "KUBECONFIG":
            monkeypatch.delenv(name, raising=False)
    saved = kubernetes.client.Configuration._default
    kubernetes.client.Configuration._default = None
    yield
    kubernetes.client.Configuration._default = saved


@pytest.fixture
def kubeconfig_file(tmp_path):
    """A kubeconfig with two clusters/contexts (token auth, no network needed to load it)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "alpha", "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}},
            {"name": "beta", "cluster": {"server": "https://127.0.0.2:7443", "insecure-skip-tls-verify": True}},
        ],
        "users": [
            {"name": "alpha-admin", "user": {"token": "alpha-token"}},
            {"name": "beta-admin", "user": {"token": "beta-token"}},
        ],
        "contexts": [
            {"name": "alpha", "context": {"cluster": "alpha", "user": "alpha-admin", "namespace": "default"}},
            {"name": "beta", "context": {"cluster": "beta", "user": "beta-admin"}},
        ],
        "current-context": "alpha",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture
def fake_module():
    """``fake_module(params=None, check_mode=False)``: a lib.fakes.FakeModule with the auth options, for
    kubernetes.core's client code."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.args import auth_argspec

    return functools.partial(FakeModule, argument_spec=auth_argspec())
