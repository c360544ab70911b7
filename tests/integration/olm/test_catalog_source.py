"""olm_catalog_source against the testbed's real API server and OLM catalog operator.

Address catalogs point at the testbed's `opm serve` (READY), at a free loopback port where nothing listens (OLM
reports TRANSIENT_FAILURE within seconds: the module fails at once), and at a loopback socket that accepts TCP but
never speaks gRPC (OLM stays CONNECTING: the module times out with the last state). Image catalogs are only sent
with server-side dry run (check mode), or into a namespace whose Pod Security refuses OLM's registry pod.
"""

import json
import socket
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient
from testbed.procs import free_port

pytestmark = pytest.mark.testbed

GROUP, VERSION, PLURAL = "operators.coreos.com", "v1alpha1", "catalogsources"


def stored(custom, namespace, name):
    try:
        return custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def catalog(run_module, kubeconfig, namespace, check_mode=False, diff=False, **args):
    params = dict(kubeconfig=kubeconfig, name="cat", namespace=namespace, wait=True, wait_timeout=120)
    params.update(args)
    started = time.monotonic()
    result = run_module("olm_catalog_source", params, check_mode=check_mode, diff=diff)
    result["_seconds"] = round(time.monotonic() - started, 2)
    return result


def test_ready_idempotent_check_mode_and_absent(run_module, kubeconfig, namespace, testbed, custom):
    address = testbed.catalog_address

    predicted = catalog(run_module, kubeconfig, namespace, check_mode=True, diff=True, address=address, display_name="Testbed")
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True
    assert predicted["catalog_source"]["spec"] == {"sourceType": "grpc", "address": address, "displayName": "Testbed"}
    assert predicted["diff"]["before"] == {} and predicted["diff"]["after"]["spec"]["address"] == address
    assert stored(custom, namespace, "cat") is None, "check mode must not create the CatalogSource"

    created = catalog(run_module, kubeconfig, namespace, address=address, display_name="Testbed")
    assert not created.get("failed"), created
    assert created["changed"] is True and created["state"] == "READY"
    assert created["catalog_source"]["status"]["connectionState"]["address"] == address
    assert "managedFields" not in created["catalog_source"]["metadata"]
    print(f"time to READY after apply: {created['duration']}s (module run {created['_seconds']}s)")

    again = catalog(run_module, kubeconfig, namespace, address=address, display_name="Testbed")
    assert not again.get("failed"), again
    assert again["changed"] is False and again["state"] == "READY"
    assert catalog(run_module, kubeconfig, namespace, check_mode=True, address=address, display_name="Testbed")["changed"] is False

    # a change predicted in check mode is exactly what a real run then does
    change = dict(address=address, display_name="Renamed", publisher="kubeforge", priority=5)
    predicted = catalog(run_module, kubeconfig, namespace, check_mode=True, diff=True, **change)
    assert predicted["changed"] is True
    assert stored(custom, namespace, "cat")["spec"]["displayName"] == "Testbed"
    applied = catalog(run_module, kubeconfig, namespace, diff=True, **change)
    assert applied["changed"] is True
    assert applied["catalog_source"]["spec"] == predicted["catalog_source"]["spec"]
    assert applied["diff"]["before"]["spec"]["displayName"] == "Testbed"
    assert stored(custom, namespace, "cat")["spec"] == {
        "sourceType": "grpc",
        "address": address,
        "displayName": "Renamed",
        "publisher": "kubeforge",
        "priority": 5,
    }

    # options the module no longer sets are removed (server-side apply owns them)
    trimmed = catalog(run_module, kubeconfig, namespace, address=address)
    assert trimmed["changed"] is True
    assert stored(custom, namespace, "cat")["spec"] == {"sourceType": "grpc", "address": address}

    gone_predicted = catalog(run_module, kubeconfig, namespace, check_mode=True, state="absent")
    assert gone_predicted["changed"] is True and stored(custom, namespace, "cat") is not None
    gone = catalog(run_module, kubeconfig, namespace, state="absent")
    assert not gone.get("failed"), gone
    assert gone["changed"] is True and gone["catalog_source"] is None
    assert stored(custom, namespace, "cat") is None
    assert catalog(run_module, kubeconfig, namespace, state="absent")["changed"] is False


def test_nothing_listening_fails_fast_with_olm_state(run_module, kubeconfig, namespace):
    address = f"127.0.0.1:{free_port()}"
    result = catalog(run_module, kubeconfig, namespace, address=address, wait_timeout=120)
    assert result.get("failed") is True, result
    assert result["changed"] is True and result["state"] == "TRANSIENT_FAILURE"
    for fragment in ("TRANSIENT_FAILURE", address, f"{namespace}/cat"):
        assert fragment in result["msg"]
    assert result["catalog_source"]["status"]["connectionState"]["address"] == address
    # far from wait_timeout: OLM's verdict, not a timeout
    assert result["duration"] < 30 and result["_seconds"] < 60
    print(f"TRANSIENT_FAILURE reported {result['duration']}s after apply (module run {result['_seconds']}s)")


def test_moving_a_ready_catalog_to_a_dead_address_fails_on_the_new_address(run_module, kubeconfig, namespace, testbed):
    assert not catalog(run_module, kubeconfig, namespace, address=testbed.catalog_address).get("failed")
    dead = f"127.0.0.1:{free_port()}"
    result = catalog(run_module, kubeconfig, namespace, address=dead)
    # the READY state of the previous address must not count for the new one
    assert result.get("failed") is True and result["state"] == "TRANSIENT_FAILURE", result
    assert dead in result["msg"]
    back = catalog(run_module, kubeconfig, namespace, address=testbed.catalog_address)
    assert not back.get("failed") and back["state"] == "READY", back


def test_silent_server_times_out_with_the_last_state(run_module, kubeconfig, namespace):
    # accepts TCP connections (kernel backlog) but never answers: OLM's gRPC client stays CONNECTING
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        address = "127.0.0.1:%d" % silent.getsockname()[1]
        result = catalog(run_module, kubeconfig, namespace, address=address, wait_timeout=3)
    assert result.get("failed") is True, result
    assert "Timed out after 3s" in result["msg"] and f"{namespace}/cat" in result["msg"]
    assert result["changed"] is True
    assert result["catalog_source"]["spec"]["address"] == address  # partial result: the last object seen
    assert result["state"] in (None, "IDLE", "CONNECTING"), result["state"]


def test_image_catalog_dry_run_only(run_module, kubeconfig, namespace, custom):
    image = "example.invalid/kubeforge/catalog:v1"
    pod_config = {"securityContextConfig": "restricted", "nodeSelector": {"kubernetes.io/os": "linux"}}
    predicted = catalog(run_module, kubeconfig, namespace, check_mode=True, image=image, update_interval="10m", grpc_pod_config=pod_config)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True
    assert predicted["catalog_source"]["spec"] == {
        "sourceType": "grpc",
        "image": image,
        "updateStrategy": {"registryPoll": {"interval": "10m"}},
        "grpcPodConfig": pod_config,
    }
    # a key the CRD schema does not know is pruned by the API server: the module says so instead of dropping it
    typo = catalog(run_module, kubeconfig, namespace, check_mode=True, image=image, grpc_pod_config={"nodeSelectr": {"a": "b"}})
    assert typo.get("failed") is True and "spec.grpcPodConfig.nodeSelectr" in typo["msg"], typo
    # OLM rejects an invalid enum value through the CRD schema, before anything is stored
    bad = catalog(run_module, kubeconfig, namespace, check_mode=True, image=image, grpc_pod_config={"securityContextConfig": "lax"})
    assert bad.get("failed") is True and "securityContextConfig" in bad["msg"], bad
    assert stored(custom, namespace, "cat") is None


def test_a_registry_pod_pod_security_refuses_fails_fast_with_olms_error(run_module, kubeconfig, namespace, api):
    """securityContextConfig legacy in a namespace that enforces restricted: the API server refuses every registry pod
    OLM creates, and OLM retries forever; the module stops at OLM's first RegistryServerError (the image is never
    pulled: the pod is refused at admission)."""
    client.CoreV1Api(api).patch_namespace(namespace, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    image = "example.invalid/kubeforge/catalog:v1"
    result = catalog(run_module, kubeconfig, namespace, image=image, grpc_pod_config={"securityContextConfig": "legacy"}, wait_timeout=120)
    assert result.get("failed") is True and "RegistryServerError" in result["msg"], result
    assert "is forbidden" in result["msg"] and "PodSecurity" in result["msg"], result["msg"]
    assert result["duration"] < 60, result


def managers_of(obj, field):
    """The field managers that own ``spec.<field>`` of ``obj``."""
    return sorted(e["manager"] for e in obj["metadata"]["managedFields"] if f"f:{field}" in (e.get("fieldsV1") or {}).get("f:spec", {}))


def test_fields_of_another_manager_are_taken_over_only_with_force_conflicts(run_module, kubeconfig, namespace, testbed, custom, api):
    address = testbed.catalog_address
    other = "marketplace-operator"  # another controller applying the same CatalogSource (server-side apply)
    theirs = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "CatalogSource",
        "metadata": {"name": "cat", "namespace": namespace},
        "spec": {"sourceType": "grpc", "address": address, "displayName": "Theirs"},
    }
    resource = DynamicClient(api).resources.get(api_version=f"{GROUP}/{VERSION}", kind="CatalogSource")
    resource.server_side_apply(body=theirs, namespace=namespace, field_manager=other)
    assert managers_of(stored(custom, namespace, "cat"), "displayName") == [other]

    for check_mode in (True, False):
        refused = catalog(run_module, kubeconfig, namespace, check_mode=check_mode, address=address, display_name="Mine", wait=False)
        assert refused.get("failed") is True, refused
        assert refused["status"] == 409
        for fragment in (f'"{other}"', ".spec.displayName", f"{namespace}/cat", "force_conflicts=true"):
            assert fragment in refused["msg"], refused["msg"]
    print(f"conflict message: {refused['msg']}")
    assert stored(custom, namespace, "cat")["spec"]["displayName"] == "Theirs"

    # the same values as the other manager are no conflict: both own them
    shared = catalog(run_module, kubeconfig, namespace, address=address, display_name="Theirs", wait=False)
    assert not shared.get("failed") and shared["changed"] is False, shared
    assert managers_of(stored(custom, namespace, "cat"), "displayName") == ["kubeforge", other]

    forced = catalog(run_module, kubeconfig, namespace, address=address, display_name="Mine", force_conflicts=True)
    assert not forced.get("failed"), forced
    assert forced["changed"] is True and forced["state"] == "READY"
    obj = stored(custom, namespace, "cat")
    assert obj["spec"]["displayName"] == "Mine"
    assert managers_of(obj, "displayName") == ["kubeforge"]
    assert managers_of(obj, "address") == ["kubeforge", other]  # same value: still shared
    # ours now: a run without force_conflicts is no conflict and no change
    again = catalog(run_module, kubeconfig, namespace, address=address, display_name="Mine", wait=False)
    assert not again.get("failed") and again["changed"] is False, again


@pytest.mark.parametrize(
    "args, fragment",
    [
        (dict(address="127.0.0.1:1", image="example.invalid/c:v1"), "mutually exclusive"),
        (dict(), "address, image"),
        (dict(address="127.0.0.1:1", update_interval="10m"), "only valid with image"),
        (dict(address="no-port"), "host:port"),
    ],
)
def test_invalid_options_fail_before_any_request(run_module, kubeconfig, namespace, custom, args, fragment):
    result = catalog(run_module, kubeconfig, namespace, **args)
    assert result.get("failed") is True and fragment in result["msg"], result
    assert stored(custom, namespace, "cat") is None


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    kubeforge.operators.olm_catalog_source:
      kubeconfig: "{{ kubeconfig }}"
      namespace: "{{ namespace }}"
      name: play
  tasks:
    - name: predict
      kubeforge.operators.olm_catalog_source:
        address: "{{ address }}"
      check_mode: true
      register: predicted
    - name: create and wait
      kubeforge.operators.olm_catalog_source:
        address: "{{ address }}"
        wait: true
      register: created
    - name: again
      kubeforge.operators.olm_catalog_source:
        address: "{{ address }}"
        wait: true
      register: again
    - name: delete
      kubeforge.operators.olm_catalog_source:
        state: absent
        wait: true
      register: deleted
    - name: save
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: "{{ {'predicted': predicted, 'created': created, 'again': again, 'deleted': deleted} | to_json }}"
        mode: "0600"
"""


def test_through_ansible_playbook(run_playbook, kubeconfig, namespace, testbed, tmp_path, custom):
    results_file = tmp_path / "results.json"
    returncode, output = run_playbook(
        PLAYBOOK, {"kubeconfig": kubeconfig, "namespace": namespace, "address": testbed.catalog_address, "results_file": str(results_file)}
    )
    assert returncode == 0, output
    results = json.loads(results_file.read_text())
    assert results["predicted"]["changed"] is True and results["predicted"]["state"] is None
    assert results["created"]["changed"] is True and results["created"]["state"] == "READY"
    assert results["again"]["changed"] is False and results["again"]["state"] == "READY"
    assert results["deleted"]["changed"] is True
    assert stored(custom, namespace, "play") is None
