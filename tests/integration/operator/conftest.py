"""Fixtures of the kubeforge-operator tests: its CRDs applied from operator/config/crd (as OLM would)."""

from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.polling import poll_until

OPERATOR_DIR = Path(__file__).resolve().parents[3] / "operator"
GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"


def crd_documents():
    return [yaml.safe_load(p.read_text()) for p in sorted((OPERATOR_DIR / "config" / "crd").glob("*.yaml"))]


def established(ext, name):
    crd = ext.read_custom_resource_definition(name)
    return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])


@pytest.fixture(scope="session")
def operator_crds(api):
    """The operator's CRDs, created (or left as they are when the bundle installed them) and established."""
    ext = client.ApiextensionsV1Api(api)
    names = []
    for doc in crd_documents():
        names.append(doc["metadata"]["name"])
        try:
            ext.create_custom_resource_definition(doc)
        except ApiException as exc:
            if exc.status != 409:
                raise
    poll_until(lambda: all(established(ext, n) for n in names), 30, 0.2, f"CRDs established: {names}")
    return names
