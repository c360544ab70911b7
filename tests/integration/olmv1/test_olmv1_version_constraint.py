# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""olmv1/version_constraint.py against the real thing: the API server's validation of a ClusterExtension's
spec.source.catalog.version (server-side dry run, v1.5.1 CRD) decides like ``validate_field``, word for word, and
operator-controller reports a constraint that the CRD lets through but Masterminds/semver refuses with
``ConstraintError.resolver_message``."""

import json
import random

import pytest
from kubernetes import client
from lib.polling import poll_until

from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import version_constraint as vc

# One xdist worker for every file of this group: the OLM v1 test catalog and ClusterExtensions, shared with the other OLM v1 file.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olmv1")]

GROUP, VERSION, PLURAL = "olm.operatorframework.io", "v1", "clusterextensions"

# Quirks of the CRD's rule and of the length limit, then generated constraints (fixed seed).
PROBES = [
    "1.*.*",
    "1.2 - 1.4.5",
    "|",
    "||1",
    "1.*]",
    "1 *",
    "1 *]",
    ">=1 <2.*.*",
    "1,,2",
    "1||  2",
    "1\v",
    "\t1\n",
    "01.2",
    "1.2.3-01",
    "\u00e9" * 40,
    "1" * 64,
    "1" * 65,
    "",
]


def generated(count, seed=20260):
    rnd = random.Random(seed)

    def version():
        parts = [rnd.choice(["0", "1", "2", "10", "x", "X", "*", "*]", "01"]) for _n in range(rnd.choice([1, 2, 3, 3]))]
        return rnd.choice(["", "", "v"]) + ".".join(parts) + rnd.choice(["", "", "-alpha", "-0"]) + rnd.choice(["", "", "+b.1"])

    out = set()
    while len(out) < count:
        ops = ["", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"]
        items = [rnd.choice(ops) + rnd.choice(["", " "]) + version() for _n in range(rnd.choice([1, 2, 3]))]
        text = items[0]
        for item in items[1:]:
            text += rnd.choice([" ", ", ", ",", " || ", "||", " - "]) + item
        out.add(text[:70])
    return sorted(out)


def extension(name, version, namespace="default"):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterExtension",
        "metadata": {"name": name},
        "spec": {
            "namespace": namespace,
            "serviceAccount": {"name": "default"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "kubeforge-no-such-package", "version": version}},
        },
    }


def api_server_verdict(custom, version):
    """None when the API server accepts the field, else the messages of its causes for it."""
    try:
        custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, extension("kf-version-probe", version), dry_run="All")
        return None
    except client.ApiException as exc:
        assert exc.status == 422, exc.body
        causes = json.loads(exc.body)["details"]["causes"]
        return "; ".join(f"{c['field']}: {c['message']}" for c in causes if c.get("field") == vc.FIELD_PATH)


def local_verdict(version):
    try:
        vc.validate_field(version)
        return None
    except vc.FieldError as exc:
        return str(exc)


def test_field_validation_matches_the_api_server(olmv1, api):
    custom = client.CustomObjectsApi(api)
    probes = PROBES + generated(150)
    accepted = 0
    for version in probes:
        expected = api_server_verdict(custom, version)
        assert local_verdict(version) == expected, repr(version)
        accepted += expected is None
    # both outcomes were exercised
    assert 20 < accepted < len(probes) - 20


@pytest.mark.parametrize("version", ["1.*]", "1.2.3-01"])
def test_operator_controller_reports_the_library_error(olmv1, api, namespace, version):
    # The CRD accepts these, the library does not: operator-controller's Progressing message is ours.
    vc.validate_field(version)
    with pytest.raises(vc.ConstraintError) as err:
        vc.validate(version)
    custom = client.CustomObjectsApi(api)
    name = "kf-version-" + namespace[-6:]
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, extension(name, version, namespace))
    try:

        def progressing():
            obj = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
            conditions = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
            return conditions.get("Progressing") or {}

        def retrying(condition):
            return condition.get("reason") == "Retrying" and bool(condition.get("message"))

        message = poll_until(progressing, 60, 0.5, "Progressing reason Retrying with a message", until=retrying).get("message")
        assert message == err.value.resolver_message
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)
