#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: bundle_image
short_description: Build and push an operator bundle image (registry+v1) without a container engine
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Builds an operator bundle image from a bundle directory in pure Python, the way the C(bundle.Dockerfile) that
    C(operator-sdk generate bundle) writes, followed by a container build, would; and optionally pushes it to a
    registry (Registry HTTP API v2) or writes it as an OCI image layout.
  - The image is C(FROM scratch) with one layer per C(COPY) line of that Dockerfile, in its order
    C(manifests/) to C(/manifests/), C(metadata/) to C(/metadata/) and, when C(tests/scorecard/config.yaml)
    exists, C(tests/scorecard/) to C(/tests/scorecard/). Layers are deterministic (sorted entries, mtime 0,
    uid/gid 0), so the same input always gives the same digest and pushing is idempotent.
  - Every annotation of C(metadata/annotations.yaml) becomes an image label, as in operator-sdk's Dockerfile; the
    core labels C(operators.operatorframework.io.bundle.mediatype.v1=registry+v1),
    C(operators.operatorframework.io.bundle.manifests.v1=manifests/) and
    C(operators.operatorframework.io.bundle.metadata.v1=metadata/) are added when the annotations leave them out,
    and so are the scorecard labels C(operators.operatorframework.io.test.mediatype.v1=scorecard+v1) and
    C(operators.operatorframework.io.test.config.v1=tests/scorecard/) when C(tests/scorecard/config.yaml) exists.
  - Refuses, before building anything, bundles that OLM would not install - no C(manifests/) directory, no
    C(metadata/annotations.yaml), annotations without an C(annotations) map or without the package annotation
    C(operators.operatorframework.io.bundle.package.v1), core annotations that contradict the image layout,
    subdirectories in C(manifests/) (OLM v1 requires it flat), a manifest file that is not YAML or JSON Kubernetes
    objects, and no (or more than one) ClusterServiceVersion.
  - Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  path:
    description:
      - Bundle directory, holding C(manifests/), C(metadata/) and optionally C(tests/scorecard/). Other content of
        the directory is not added to the image.
    type: path
    required: true
  image:
    description:
      - Target image reference, for example V(quay.io/example/my-operator-bundle:v0.0.1).
      - References without a registry host are Docker Hub references (V(docker.io/library/...)).
      - Required when O(push=true). When only O(oci_layout) is set, its tag names the image in C(index.json).
    type: str
  labels:
    description:
      - Extra image labels. Values are converted to strings.
      - A label that the bundle already sets (from C(metadata/annotations.yaml) or operator-sdk's defaults) may
        only be repeated with the same value; change the annotation instead.
    type: dict
    default: {}
  manifest_format:
    description:
      - V(oci) writes an OCI image manifest, V(docker) a Docker image manifest v2 schema 2.
    type: str
    choices: [oci, docker]
    default: oci
  platform:
    description:
      - C(os/architecture[/variant]) recorded in the image config. Bundle images hold no binaries; container
        builds record the build host's platform.
    type: str
    default: linux/amd64
  push:
    description:
      - Push the image to O(image). The manifest is only uploaded when the tag does not already point at the same
        manifest digest, so C(changed) is V(false) on a second run with unchanged input.
    type: bool
    default: false
  dockerfile_only:
    description:
      - Only produce the C(bundle.Dockerfile) operator-sdk would generate for O(path) (returned as
        RV(dockerfile)); do not build or push anything. The bundle is still checked.
      - O(image), O(push), O(oci_layout), O(manifest_format), O(platform) and the registry options are refused
        with it (they would have no effect).
    type: bool
    default: false
  dockerfile_path:
    description:
      - Write the generated Dockerfile to this file (operator-sdk writes C(bundle.Dockerfile) in the project root).
        Its C(COPY) lines name the bundle directory relative to the directory of this file, the build context.
        Without it they name the base name of O(path) (the context is then the parent of O(path)).
      - The file is rewritten only when its content differs. Used with or without O(dockerfile_only).
    type: path
  oci_layout:
    description:
      - Also write the image as an OCI image layout (C(oci-layout), C(index.json), C(blobs/sha256/...)) into this
        directory, tagged with the tag of O(image) (or V(latest)).
    type: path
    aliases: [output_dir]
notes:
  - The registry options are only used to push (a bundle image has no base image), so without O(push=true) they
    are refused (a value that differs from the default), as every option is where it would have no effect.
  - Supports check mode; the image is built in memory and its digest returned, but nothing is pushed or written.
    C(changed) tells whether a real run would push or write.
  - Files are written atomically (a unique temporary file in the same directory, then renamed into place) and
    only when their content differs; blobs already in O(oci_layout) with the right digest are kept.
  - File modes are normalised (0644, 0755 for files executable by their owner) and ownership is root, as in a
    container build.
  - Error messages name the registry, repository and HTTP status; they never contain passwords or tokens.
seealso:
  - module: kubeforge.operators.catalog_image
  - name: operator-sdk generate bundle
    description: Writes the bundle directory and the C(bundle.Dockerfile) this module reproduces.
    link: https://sdk.operatorframework.io/docs/cli/operator-sdk_generate_bundle/
  - name: Operator bundle format
    description: The registry+v1 bundle image format (manifests, metadata, annotations and labels).
    link: https://olm.operatorframework.io/docs/tasks/creating-operator-bundle/
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.registry_auth
attributes:
  check_mode:
    support: full
  diff_mode:
    support: partial
    details: Shows O(dockerfile_path) and the C(oci-layout) and C(index.json) files of O(oci_layout); image blobs
      and pushes are not shown.
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Build the 0.0.1 bundle image and push it
  kubeforge.operators.bundle_image:
    path: bundle
    image: quay.io/example/my-operator-bundle:v0.0.1
    push: true
    registry_username: "{{ quay_user }}"
    registry_password: "{{ quay_token }}"
  register: bundle

- name: Reference the pushed bundle by digest, for example in a catalog template
  ansible.builtin.debug:
    msg: "{{ bundle.image }} is {{ bundle.csv.name }} of package {{ bundle.package }}"

- name: Write the bundle.Dockerfile operator-sdk would generate
  kubeforge.operators.bundle_image:
    path: bundle
    dockerfile_only: true
    dockerfile_path: bundle.Dockerfile

- name: Save the image as an OCI layout, no registry needed
  kubeforge.operators.bundle_image:
    path: bundle
    image: my-operator-bundle:v0.0.1
    oci_layout: build/bundle-oci
"""

RETURN = r"""
digest:
  description: Digest of the image manifest.
  returned: unless O(dockerfile_only=true)
  type: str
  sample: sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
image:
  description:
    - The target repository with the manifest digest, V(registry/repository@digest), the reference to put into a
      catalog (the C(image) of an C(olm.bundle)).
    - It carries no tag; containers/image, which opm, catalogd and operator-controller pull with, refuses
      references with both a tag and a digest.
  returned: when O(image) is set and O(dockerfile_only=false)
  type: str
  sample: quay.io/example/my-operator-bundle@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
media_type:
  description: Media type of the image manifest.
  returned: unless O(dockerfile_only=true)
  type: str
  sample: application/vnd.oci.image.manifest.v1+json
manifest:
  description: The image manifest (one layer per directory copied).
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    schemaVersion: 2
    mediaType: application/vnd.oci.image.manifest.v1+json
    config:
      mediaType: application/vnd.oci.image.config.v1+json
      digest: sha256:0b4f...
      size: 1012
    layers:
      - mediaType: application/vnd.oci.image.layer.v1.tar+gzip
        digest: sha256:9a1e...
        size: 3072
      - mediaType: application/vnd.oci.image.layer.v1.tar+gzip
        digest: sha256:3c5d...
        size: 512
config:
  description: The image configuration (labels are in C(config.Labels)).
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    architecture: amd64
    os: linux
    config:
      Labels:
        operators.operatorframework.io.bundle.package.v1: my-operator
    rootfs:
      type: layers
      diff_ids: [sha256:1c2d..., sha256:7e8f...]
labels:
  description: The image labels (same as C(config.config.Labels)).
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    operators.operatorframework.io.bundle.mediatype.v1: registry+v1
    operators.operatorframework.io.bundle.manifests.v1: manifests/
    operators.operatorframework.io.bundle.metadata.v1: metadata/
    operators.operatorframework.io.bundle.package.v1: my-operator
    operators.operatorframework.io.bundle.channels.v1: alpha
dockerfile:
  description: The C(bundle.Dockerfile) operator-sdk would generate for O(path), with O(labels) in a last block.
  returned: always
  type: str
  sample: "FROM scratch\n\n# Core bundle labels.\nLABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1\n..."
package:
  description: The package of the bundle (annotation C(operators.operatorframework.io.bundle.package.v1)).
  returned: always
  type: str
  sample: my-operator
csv:
  description: The ClusterServiceVersion of the bundle.
  returned: always
  type: dict
  contains:
    name:
      description: C(metadata.name) of the ClusterServiceVersion.
      type: str
      sample: my-operator.v0.0.1
    version:
      description: C(spec.version) of the ClusterServiceVersion; V(null) when it has none.
      type: str
      sample: 0.0.1
pushed:
  description: Whether the manifest was (or, in check mode, would be) pushed.
  returned: when O(push=true)
  type: bool
blobs:
  description: Blob counts of the push; V(exists) (already in the repository), V(uploaded); V(mounted) and
    V(copied) are always V(0) (bundle images have no base image).
  returned: when O(push=true)
  type: dict
  sample: {exists: 0, mounted: 0, uploaded: 3, copied: 0}
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.bundle_image import (
    YAML_IMPORT_ERROR,
    execute,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.image import (
    BUNDLE_IMAGE_UNUSED,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module


def argspec():
    spec = dict(
        path=dict(type="path", required=True),
        image=dict(type="str"),
        labels=dict(type="dict", default={}),
        manifest_format=dict(type="str", choices=["oci", "docker"], default="oci"),
        platform=dict(type="str", default="linux/amd64"),
        push=dict(type="bool", default=False),
        dockerfile_only=dict(type="bool", default=False),
        dockerfile_path=dict(type="path"),
        oci_layout=dict(type="path", aliases=["output_dir"]),
    )
    spec.update(registry_argspec())
    return spec


def main():
    module = MaskingAnsibleModule(
        argument_spec=argspec(),
        required_if=[("push", True, ("image",))],
        supports_check_mode=True,
    )
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=BUNDLE_IMAGE_UNUSED)


if __name__ == "__main__":
    main()
