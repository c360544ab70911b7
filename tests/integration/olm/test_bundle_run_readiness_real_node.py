"""olm_bundle_run's registry pod on the testbed's real node when its readiness probe never passes: an opm image
without /bin/grpc_health_probe. Not in the real-node-olm group: it waits out the module's minute of grace on its own
namespace and pod, alongside the others."""

import time
from pathlib import Path

import pytest
from lib.olm_bundles import write_runnable_bundle

pytestmark = pytest.mark.testbed


def run(run_module, kubeconfig, namespace, opm_image, **args):
    params = {"kubeconfig": kubeconfig, "namespace": namespace, "serve": "pod", "opm_image": opm_image, "wait_timeout": 240}
    params.update(args)
    return run_module("olm_bundle_run", params)


def test_a_registry_pod_that_never_passes_its_readiness_probe_fails_after_a_minute(run_module, kubeconfig, real_node_namespace, real_node, tmp_path, testbed):
    """An opm image without /bin/grpc_health_probe (a custom or trimmed opm_image): opm serves, the kubelet's probe
    cannot run, the pod stays Running and not Ready without a change to its status. The module fails a minute after
    the container started, with the kubelet's probe message, not after wait_timeout."""
    from testbed import realnode

    files, entrypoint, cmd = realnode.image_files(Path(testbed.state["bin"]), "opm")
    del files["/bin/grpc_health_probe"]
    registry = testbed.state["registry"]
    with open(registry["password_file"], encoding="utf-8") as handle:
        password = handle.read().strip()
    oci_client, image = realnode.oci_modules()
    probeless = f"{registry['host']}/kubeforge/testbed/opm-without-probe:v1"
    built = realnode.build_image(files, entrypoint, cmd)
    image.push_image(oci_client.client_for(probeless, username=registry["username"], password=password, ca_file=registry["ca_file"]), probeless, built)

    bundle = write_runnable_bundle(tmp_path / "0.0.1", "kube-demo", "0.0.1", real_node["images"])
    started = time.monotonic()
    result = run(run_module, kubeconfig, real_node_namespace, probeless, bundle_dir=str(bundle), wait_timeout=300)
    assert result.get("failed") and result.get("reason") == "RegistryPodFailed", result
    assert "without passing its readiness probe" in result["msg"], result["msg"]
    assert "grpc_health_probe" in result["msg"].split("the opm_image must have both)")[1], result["msg"]  # the kubelet's own words
    assert time.monotonic() - started < 150
