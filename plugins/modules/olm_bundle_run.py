#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_bundle_run
short_description: Run an operator bundle directory or image through OLM v0, upgrade it, clean it up (operator-sdk run bundle)
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - The equivalent of C(operator-sdk run bundle), C(operator-sdk run bundle-upgrade) and C(operator-sdk cleanup)
    for a bundle B(directory) (C(manifests/) and C(metadata/)), without container tools - the bundle is rendered in
    Python (C(opm render) parity, manifests embedded as C(olm.bundle.object) properties), so no bundle image is
    built, pushed or unpacked.
  - O(state=present) on a namespace where the package is not installed is C(run bundle) - it serves a File-Based
    Catalog with one package, one channel and the bundle from the CatalogSource C(<package>-catalog), creates the
    OperatorGroup when the namespace has none (install mode from the CSV's C(installModes), or O(target_namespaces))
    and a Subscription with C(installPlanApproval=Manual) and the bundle's CSV as C(startingCSV), approves that one
    InstallPlan and waits until the CSV is C(Succeeded).
  - When the package is already installed from this module's catalog and the bundle is a newer version, it is
    C(run bundle-upgrade) - the new bundle joins the catalog as a channel entry that replaces the installed CSV,
    and only the InstallPlan of the new CSV is approved. A bundle of the installed version changes nothing; an
    older one fails (OLM does not downgrade).
  - With O(index_image), the first install serves that index's catalog with the bundle added (dependencies the bundle
    needs resolve from it), as C(operator-sdk run bundle --index-image) does for a file-based catalog.
  - Approval, waiting and failure detection are those of M(kubeforge.operators.olm_operator) - failures are
    reported with OLM's own reason (ResolutionFailed, a failed InstallPlan or CSV, pods that cannot start) - and a
    plan that also carries other Subscriptions' CSVs is not approved.
  - With O(serve=pod) (real clusters), the catalog is stored as JSON in immutable ConfigMaps (split between catalog
    objects, under 1 MiB each) and served by a registry pod running C(opm serve) from O(opm_image), with the
    ConfigMaps mounted as files (no init container). When the pod is Ready, the CatalogSource's C(spec.address)
    becomes C(<pod IP>:50051) and it carries operator-sdk's annotations
    C(operators.operatorframework.io/index-image), C(operators.operatorframework.io/injected-bundles) and
    C(operators.operatorframework.io/registry-pod-name). The ConfigMaps and the pod are owned by the CatalogSource.
    An upgrade starts a new pod and removes the old one after the CatalogSource points at the new one.
  - With O(serve=address), the CatalogSource points at O(catalog_address), a gRPC registry that already serves the
    bundle (for example C(opm serve) on a catalog built with M(kubeforge.operators.catalog_render), or one in
    another cluster); for an upgrade it must serve the new bundle as a replacement of the installed one.
  - O(state=absent) is C(operator-sdk cleanup) - the Subscription, (with O(delete_crds_and_data)) the custom resources and
    CRDs of the operator, its CSV, the OperatorGroup if an install by this collection created it and nothing else
    uses it, then the CatalogSource and its ConfigMaps and registry pods. Objects this module did not create (a
    CatalogSource of the same name without its label, a Subscription from another catalog) are left alone, with a
    warning.
options:
  state:
    description:
      - V(present) installs or upgrades the bundle; V(absent) removes what the module made.
    type: str
    choices: [present, absent]
    default: present
  bundle_dir:
    description:
      - Path of the bundle directory on the managed node, with C(manifests/) (the ClusterServiceVersion, CRDs and
        other objects) and C(metadata/annotations.yaml).
      - Required with O(state=present) unless O(bundle_image) is set. With O(state=absent) it may name the package
        instead of O(package).
    type: path
  bundle_image:
    description:
      - A bundle image to run instead of O(bundle_dir) - what C(operator-sdk run bundle <image>) takes. The module
        pulls and unpacks it (with O(registry_auth), or the credentials of O(pull_secret)) and runs it like a
        directory; the catalog names this image for the bundle.
      - With O(state=absent) it may name the package instead of O(package).
    type: str
    version_added: 0.1.0
  index_image:
    description:
      - A catalog (index) image whose catalog the bundle is added to, as C(operator-sdk run bundle --index-image) does
        for a file-based catalog - so that dependencies the bundle needs resolve from it. The module pulls it (with
        O(registry_auth), or the credentials of O(pull_secret)), adds the bundle to its channel (replacing the
        channel's head, or in a new channel) and serves the result with its registry pod; an index that has the bundle
        already is refused.
      - Pulled and used by the first install only; later runs extend the catalog served, which holds the index.
        The CatalogSource's C(operators.operatorframework.io/index-image) annotation names it, and
        C(injected-bundles) lists only the bundles the module added.
      - Only with O(state=present) and O(serve=pod) (refused otherwise).
    type: str
    version_added: 0.1.0
  pull_secret:
    description:
      - Name of a C(kubernetes.io/dockerconfigjson) Secret in O(namespace), as operator-sdk's C(--pull-secret-name)
        - its credentials pull O(bundle_image) and O(index_image), and the registry pod (O(serve=pod)) pulls
        O(opm_image) with it.
      - Refused where it would have no effect (O(serve=address) or O(state=absent) without O(bundle_image) or
        O(index_image)), and together with O(registry_auth.docker_config).
    type: str
    version_added: 0.1.0
  package:
    description:
      - Package name. Defaults to the bundle's annotation C(operators.operatorframework.io.bundle.package.v1); when
        both are given they must agree.
      - With O(state=absent), O(package), O(bundle_dir) or O(bundle_image) is required.
    type: str
  namespace:
    description:
      - Namespace of the operator, its CatalogSource, the registry pod and the Subscription. Created when missing
        (and not removed by O(state=absent)).
    type: str
    required: true
  channel:
    description:
      - Channel of the generated catalog and of the Subscription.
      - Defaults to the bundle's default channel (C(operators.operatorframework.io.bundle.channel.default.v1)), else
        its first channel, else operator-sdk's C(operator-sdk-run-bundle).
      - With O(serve=address) it must be a channel of the served catalog.
    type: str
  serve:
    description:
      - How the catalog is served.
      - V(pod) - ConfigMaps and a registry pod in O(namespace), as C(operator-sdk run bundle) does. OLM's catalog
        operator dials the pod's IP, so it must reach the pod network.
      - V(address) - an existing gRPC registry at O(catalog_address); nothing is created besides the CatalogSource.
    type: str
    choices: [pod, address]
    default: pod
  catalog_address:
    description:
      - C(host:port) of the gRPC registry serving the bundle, with O(serve=address) (required then).
    type: str
  opm_image:
    description:
      - Image of the registry pod, with O(serve=pod). It must contain C(/bin/opm) (run as C(opm serve)) and
        C(/bin/grpc_health_probe) (the readiness probe), as the upstream C(quay.io/operator-framework/opm) images
        do; a registry pod that has run a minute without passing the probe fails the module with the kubelet's
        message. The default is the opm release the collection is tested with; pin it by digest in production.
      - Refused with O(serve=address) (other than its default), like O(image_pull_policy) and
        O(security_context_config) (they configure the module's registry pod).
    type: str
    default: quay.io/operator-framework/opm:v1.73.0
  image_pull_policy:
    description:
      - C(imagePullPolicy) of the registry pod.
    type: str
    choices: [Always, IfNotPresent, Never]
    default: IfNotPresent
  security_context_config:
    description:
      - Security context of the registry pod, as operator-sdk's C(--security-context-config).
      - V(restricted) passes the Pod Security C(restricted) profile - C(runAsNonRoot) (no fixed UID, so OpenShift
        can assign one), C(RuntimeDefault) seccomp, no privilege escalation, all capabilities dropped, a read-only
        root filesystem.
      - V(legacy) sets no security context, for clusters older than Kubernetes 1.19 or OpenShift 4.11 (operator-sdk's
        default).
    type: str
    choices: [restricted, legacy]
    default: restricted
  target_namespaces:
    description:
      - Namespaces the operator watches, when the namespace has no OperatorGroup yet (the module creates one). An
        empty list means all namespaces; the operator's own namespace alone means OwnNamespace (operator-sdk's
        C(--install-mode)).
      - Without it, OwnNamespace if the CSV supports it (least privilege), else AllNamespaces - as
        M(kubeforge.operators.olm_operator) chooses. operator-sdk prefers AllNamespaces.
      - When the namespace already has an OperatorGroup, its targets must equal these.
    type: list
    elements: str
  delete_crds_and_data:
    description:
      - With O(state=absent), also delete every custom resource of the CSV's owned CRDs (waiting while the operator
        processes their finalizers) and then the CRDs. B(This deletes user data.)
      - Named as in M(kubeforge.operators.olm_cluster_extension); the former name C(remove_crds) is an alias.
      - Refused with O(state=present) and with O(wait=false) (it would have no effect there).
    type: bool
    default: false
    aliases: [remove_crds]
  wait:
    description:
      - Wait until the CSV is C(Succeeded) (O(state=present)) or the CSV and the CatalogSource are gone
        (O(state=absent)). Without waiting nothing is approved.
      - With O(serve=pod) the module always waits for the registry pod to be Ready (its IP is the catalog's
        address), within O(wait_timeout).
    default: true
  wait_timeout:
    description:
      - Seconds for the whole run (registry pod and install). On timeout the module fails with the Subscription
        state, the InstallPlan phase and the CSV phase and reason it saw last (or the registry pod's state).
    default: 600
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.k8s_wait
  - kubeforge.operators.registry_auth.dict_option
attributes:
  check_mode:
    support: full
    details:
      - The ConfigMaps, the registry pod, the CatalogSource, the OperatorGroup and the Subscription are sent as
        server-side dry runs (the API server validates and admits them, Pod Security included); nothing is
        approved or waited for.
      - A registry pod that does not run yet has no IP, so the dry-run CatalogSource keeps its current address
        (none for a first run).
  diff_mode:
    support: full
    details: The CatalogSource and the Subscription before and after.
  platform:
    platforms: posix
notes:
  - O(registry_auth) - How the module pulls O(bundle_image) and O(index_image) (refused without one of them).
    O(registry_auth.username) is for the registry of O(bundle_image) and O(index_image).
  - The generated catalog is validated like C(opm validate) before it is served.
  - A catalog object (one bundle with its embedded manifests) larger than a ConfigMap (about 960 KiB of JSON)
    cannot be served with O(serve=pod); serve it with O(serve=address). operator-sdk compresses the catalog
    instead and needs an init container image for that.
  - The registry pod is not managed by a controller - if it is deleted (for example by a node drain), the next run
    of the module creates it again and points the CatalogSource at its new IP. Like operator-sdk's, it is meant for
    development and testing, not for production catalogs (use an image-based CatalogSource there).
  - Names - the CatalogSource is C(<package>-catalog) (operator-sdk's), the Subscription C(<package>) (an existing
    Subscription of the package from that catalog keeps its name), the OperatorGroup (when created) is named after
    the namespace; the ConfigMaps are C(<package>-catalog-<digest>-<n>), where C(<digest>) starts the catalog's
    sha256, and the registry pod C(<package>-catalog-<hash>), where C(<hash>) starts the sha256 of its spec (a new
    image or security context makes a new pod).
  - A registry pod that cannot start (for example C(ImagePullBackOff)) fails the run at once and is left for
    inspection; the next successful run, or O(state=absent), removes it.
seealso:
  - module: kubeforge.operators.olm_operator
  - module: kubeforge.operators.olm_catalog_source
  - module: kubeforge.operators.catalog_render
  - name: operator-sdk run bundle
    description: The command this module mirrors.
    link: https://sdk.operatorframework.io/docs/cli/operator-sdk_run_bundle/
"""

EXAMPLES = r"""
- name: Run the operator from its bundle directory (operator-sdk run bundle)
  kubeforge.operators.olm_bundle_run:
    bundle_dir: bundle/
    namespace: memcached-dev

- name: Upgrade it to the next version built into the same directory (operator-sdk run bundle-upgrade)
  kubeforge.operators.olm_bundle_run:
    bundle_dir: bundle/
    namespace: memcached-dev

- name: Run a bundle image from a private registry (operator-sdk run bundle <image> --pull-secret-name)
  kubeforge.operators.olm_bundle_run:
    bundle_image: registry.example.com/team/memcached-operator-bundle:v0.0.1
    pull_secret: registry-credentials
    namespace: memcached-dev

- name: Run an add-on whose dependency comes from an index image (operator-sdk run bundle --index-image)
  kubeforge.operators.olm_bundle_run:
    bundle_dir: bundle
    namespace: my-operator
    index_image: registry.example.com/catalogs/index:v1
    pull_secret: registry-credentials

- name: Watch only its own namespace, registry pod from a mirrored opm image
  kubeforge.operators.olm_bundle_run:
    bundle_dir: /srv/bundles/memcached-operator/0.0.2
    namespace: memcached-dev
    target_namespaces: [memcached-dev]
    opm_image: registry.example.com/mirror/opm@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

- name: Use a catalog served elsewhere (opm serve on a catalog containing the bundle)
  kubeforge.operators.olm_bundle_run:
    bundle_dir: bundle/
    namespace: memcached-dev
    serve: address
    catalog_address: catalog.example.com:50051

- name: Remove everything it made, CRDs and their custom resources included (operator-sdk cleanup)
  kubeforge.operators.olm_bundle_run:
    state: absent
    package: memcached-operator
    namespace: memcached-dev
    delete_crds_and_data: true
"""

RETURN = r"""
operation:
  description:
    - V(install) (the package was not installed), V(upgrade) (an older version was) or V(same) (this version is
      installed).
  returned: state is present
  type: str
  sample: upgrade
bundle:
  description: The bundle - C(name) (its CSV), C(package), C(version) and the C(channel) used.
  returned: state is present
  type: dict
  sample: {"name": "kube-demo.v0.0.2", "package": "kube-demo", "version": "0.0.2", "channel": "stable"}
catalog_source:
  description:
    - The CatalogSource after the run (the server-side dry-run result in check mode), without C(managedFields).
  returned: state is present
  type: dict
catalog_address:
  description:
    - The CatalogSource's C(spec.address) - the registry pod's C(<IP>:50051) or O(catalog_address). None in check
      mode while the registry pod does not run yet.
  returned: state is present
  type: str
  sample: 10.244.1.17:50051
registry_pod:
  description: Name of the registry pod serving the catalog (O(serve=pod)); None with O(serve=address).
  returned: state is present
  type: str
  sample: kube-demo-catalog-3f1c9a0b7d
config_maps:
  description: Names of the ConfigMaps holding the catalog (O(serve=pod)), in order; empty with O(serve=address).
  returned: state is present
  type: list
  elements: str
catalog_digest:
  description: C(sha256:<hex>) of the served File-Based Catalog (O(serve=pod)); None with O(serve=address).
  returned: state is present
  type: str
index_image:
  description: The O(index_image) as pulled by this run (None without it, and on later runs, which do not pull it again).
  returned: state is present
  type: dict
  contains:
    ref:
      description: The image reference.
      type: str
    digest:
      description: The digest of its manifest.
      type: str
subscription:
  description: The Subscription after the run.
  returned: state is present
  type: dict
csv:
  description: The installed ClusterServiceVersion (None before the install completes, and in check mode).
  returned: state is present
  type: dict
installed_csv:
  description: The Subscription's C(status.installedCSV).
  returned: state is present
  type: str
  sample: kube-demo.v0.0.2
current_csv:
  description: The Subscription's C(status.currentCSV).
  returned: state is present
  type: str
version:
  description: The installed CSV's C(spec.version).
  returned: state is present
  type: str
  sample: 0.0.2
phase:
  description: The installed CSV's phase.
  returned: state is present
  type: str
  sample: Succeeded
approved_install_plans:
  description: InstallPlans this run approved.
  returned: state is present
  type: list
  elements: str
created:
  description:
    - What this run created (or would create, in check mode) - C(namespace), C(catalog_source), C(config_maps),
      C(registry_pod), C(operator_group), C(subscription).
  returned: state is present
  type: dict
removed:
  description:
    - What the run removed. With O(state=present) - C(registry_pods) and C(config_maps) of a catalog no longer
      served. With O(state=absent) - also C(subscription), C(csv), C(operator_group), C(operands), C(crds),
      C(catalog_source).
  returned: always
  type: dict
state:
  description:
    - What OLM showed at the end - C(subscription_state), C(subscription_conditions), C(installed_csv),
      C(current_csv), C(install_plan), C(install_plan_phase), C(csv_phase), C(csv_reason), C(csv_message).
    - The same keys are returned at the top level of a failure or timeout, with C(reason).
  returned: when the module waited for the install
  type: dict
duration:
  description: Seconds the run took.
  returned: state is present
  type: float
diff:
  description: The CatalogSource and Subscription before and after (O(state=present)), or what was removed.
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.bundle_run import DEFAULT_OPM_IMAGE
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.operator import UNINSTALL_UNUSED
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.bundle_run import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = UNINSTALL_UNUSED + (
    Unused(
        ("pull_secret",),
        lambda p: p["bundle_image"] or p["index_image"] or (p["state"] == "present" and p["serve"] == "pod"),
        "without bundle_image or index_image unless state=present and serve=pod (it pulls those images, and the registry pod's)",
    ),
    Unused(("registry_auth",), lambda p: p["bundle_image"] or p["index_image"], "without bundle_image or index_image (it is how they are pulled)"),
    Unused(
        ("opm_image", "image_pull_policy", "security_context_config"),
        lambda p: p["serve"] == "pod",
        "with serve=address (they configure the module's registry pod)",
    ),
    Unused(
        ("index_image",),
        lambda p: p["state"] == "present" and p["serve"] == "pod",
        "unless state=present and serve=pod (the module's registry pod serves the index with the bundle added)",
    ),
)


def argspec():
    return {
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "bundle_dir": {"type": "path"},
        "bundle_image": {"type": "str"},
        "index_image": {"type": "str"},
        "pull_secret": {"type": "str", "no_log": False},
        "registry_auth": {"type": "dict", "options": registry_auth_argspec()},
        "package": {"type": "str"},
        "namespace": {"type": "str", "required": True},
        "channel": {"type": "str"},
        "serve": {"type": "str", "choices": ["pod", "address"], "default": "pod"},
        "catalog_address": {"type": "str"},
        "opm_image": {"type": "str", "default": DEFAULT_OPM_IMAGE},
        "image_pull_policy": {"type": "str", "choices": ["Always", "IfNotPresent", "Never"], "default": "IfNotPresent"},
        "security_context_config": {"type": "str", "choices": ["restricted", "legacy"], "default": "restricted"},
        "target_namespaces": {"type": "list", "elements": "str"},
        "delete_crds_and_data": {"type": "bool", "default": False, "aliases": ["remove_crds"]},
        "wait": {"type": "bool", "default": True},
        "wait_timeout": {"type": "int", "default": 600},
    }


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        required_if=[
            ("state", "present", ("bundle_dir", "bundle_image"), True),
            ("state", "absent", ("package", "bundle_dir", "bundle_image"), True),
            ("serve", "address", ("catalog_address",)),
        ],
        mutually_exclusive=[("bundle_dir", "bundle_image")],
        supports_check_mode=True,
    )
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
