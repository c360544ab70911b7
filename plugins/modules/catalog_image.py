#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_image
short_description: Build and push a file-based catalog (FBC) image without a container engine
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Builds an OLM file-based catalog image from an FBC root directory in pure Python, the way
    C(opm generate dockerfile) followed by a container build would, and optionally pushes it to a registry
    (Registry HTTP API v2) or writes it as an OCI image layout.
  - The FBC root is copied to C(/configs) in one deterministic layer (sorted entries, mtime 0, uid/gid 0), so the
    same input always gives the same image digest and pushing is idempotent.
  - The image config carries the label C(operators.operatorframework.io.index.configs.v1=/configs), the extra
    O(labels) and, on top of an opm base image, C(ENTRYPOINT ["/bin/opm"]) and
    C(CMD ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]).
  - The C(/tmp/cache) serve cache that C(opm generate dockerfile)'s builder stage pre-populates is not created
    (that needs the opm binary); C(opm serve) builds it at start-up, which is why the command turns off opm's cache
    integrity check (with it, C(opm serve) exits at once on an image without the cache).
  - Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  path:
    description:
      - FBC root directory (for example C(catalogs/v4.20)). Every file below it is added to C(/configs).
    type: path
    required: true
    version_added: 0.1.0
  image:
    description:
      - Target image reference, for example V(quay.io/example/catalog:v4.20).
      - References without a registry host are Docker Hub references (V(docker.io/library/...)).
      - Required when O(push=true). When only O(oci_layout) is set, its tag names the image in C(index.json).
    type: str
    version_added: 0.1.0
  base_image:
    description:
      - Image the catalog layer is added on top of.
      - V(scratch) (the default) builds a binary-less catalog image with no entrypoint, as
        C(opm generate dockerfile --base-image scratch) does; it is served by catalogd (OLM v1) or by an OLM v0
        CatalogSource with C(spec.grpcPodConfig.extractContent) set to C(catalogDir=/configs) and no C(cacheDir)
        (the image holds no pre-built cache; see M(kubeforge.operators.olm_catalog_source)).
      - Any other value is pulled from its registry (for example V(quay.io/operator-framework/opm:latest), opm's
        own default), its O(platform) manifest is used, and its layers are copied to the target repository, by
        cross-repository mount when both live on the same registry.
      - Credentials for the base registry come from O(registry_username)/O(registry_password) when it is the same
        registry as O(image), else from O(docker_config).
    type: str
    default: scratch
    version_added: 0.1.0
  builder_image:
    description:
      - Builder image written into the generated Dockerfile (RV(dockerfile)) only; it is not used to build.
    type: str
    default: quay.io/operator-framework/opm:latest
    version_added: 0.1.0
  labels:
    description:
      - Extra image labels. Values are converted to strings.
      - The label C(operators.operatorframework.io.index.configs.v1) is always V(/configs).
    type: dict
    default: {}
    version_added: 0.1.0
  manifest_format:
    description:
      - V(oci) writes an OCI image manifest, V(docker) a Docker image manifest v2 schema 2.
    type: str
    choices: [oci, docker]
    default: oci
    version_added: 0.1.0
  platform:
    description:
      - C(os/architecture[/variant]) recorded in the image config and used to pick the base image manifest from an
        image index.
    type: str
    default: linux/amd64
    version_added: 0.1.0
  push:
    description:
      - Push the image to O(image). The manifest is only uploaded when the tag does not already point at the same
        manifest digest, so C(changed) is V(false) on a second run with unchanged input.
    type: bool
    default: false
    version_added: 0.1.0
  dockerfile_only:
    description:
      - Only produce the Dockerfile that C(opm generate dockerfile) would write for O(path) (returned as
        RV(dockerfile)); do not build, pull or push anything.
      - O(image), O(push), O(oci_layout), O(manifest_format), O(platform) and the registry options are refused
        with it (they would have no effect).
    type: bool
    default: false
    version_added: 0.1.0
  dockerfile_path:
    description:
      - Write the generated Dockerfile to this file (C(opm generate dockerfile) writes
        C(<parent>/<dirname>.Dockerfile)). The file is rewritten only when its content differs.
      - Used with or without O(dockerfile_only).
    type: path
    version_added: 0.1.0
  oci_layout:
    description:
      - Also write the image as an OCI image layout (C(oci-layout), C(index.json), C(blobs/sha256/...)) into this
        directory, tagged with the tag of O(image) (or V(latest)). Useful without a registry, for example for
        C(skopeo copy oci:DIR docker://...) later.
    type: path
    aliases: [output_dir]
    version_added: 0.1.0
notes:
  - O(registry_username)/O(registry_password) are the credentials for the registry of O(image); they are also used
    to pull O(base_image) when it lives on the same registry. Other registries get credentials from
    O(docker_config) only. Without O(push=true), the registry options are refused unless O(base_image) is pulled,
    and O(registry_username)/O(registry_password) unless it is pulled from the registry of O(image) (options are
    refused wherever they would have no effect).
  - Supports check mode; the image is built in memory and its digest returned, but nothing is pushed or written.
    C(changed) tells whether a real run would push or write.
  - Files are written atomically (a unique temporary file in the same directory, then renamed into place) and
    only when their content differs; blobs already in O(oci_layout) with the right digest are kept.
  - Error messages name the registry, repository and HTTP status; they never contain passwords or tokens.
seealso:
  - name: opm generate dockerfile
    description: The upstream command whose output this module reproduces.
    link: https://github.com/operator-framework/operator-registry
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
- name: Build the v4.20 catalog as a binary-less image and push it
  kubeforge.operators.catalog_image:
    path: catalogs/v4.20
    image: quay.io/example/catalog:v4.20
    push: true
    registry_username: "{{ quay_user }}"
    registry_password: "{{ quay_token }}"

- name: Same, on top of the opm image (opm generate dockerfile's default base)
  kubeforge.operators.catalog_image:
    path: catalogs/v4.20
    image: quay.io/example/catalog:v4.20
    base_image: quay.io/operator-framework/opm:latest
    labels:
      org.opencontainers.image.source: https://github.com/example/catalog
    push: true

- name: Write the Dockerfile opm generate dockerfile would produce
  kubeforge.operators.catalog_image:
    path: catalogs/v4.20
    dockerfile_only: true
    dockerfile_path: catalogs/v4.20.Dockerfile

- name: Save the image as an OCI layout, no registry needed
  kubeforge.operators.catalog_image:
    path: catalogs/v4.20
    image: catalog:v4.20
    oci_layout: build/catalog-oci
  register: catalog

- name: Show the digest
  ansible.builtin.debug:
    var: catalog.digest
"""

RETURN = r"""
digest:
  description: Digest of the image manifest.
  returned: unless O(dockerfile_only=true)
  type: str
  sample: sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
image:
  description: The target reference with the manifest digest (V(registry/repository:tag@digest)).
  returned: when O(image) is set and O(dockerfile_only=false)
  type: str
  sample: quay.io/example/catalog:v4.20@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
media_type:
  description: Media type of the image manifest.
  returned: unless O(dockerfile_only=true)
  type: str
  sample: application/vnd.oci.image.manifest.v1+json
manifest:
  description: The image manifest.
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    schemaVersion: 2
    mediaType: application/vnd.oci.image.manifest.v1+json
    config:
      mediaType: application/vnd.oci.image.config.v1+json
      digest: sha256:0b4f...
      size: 412
    layers:
      - mediaType: application/vnd.oci.image.layer.v1.tar+gzip
        digest: sha256:9a1e...
        size: 20480
config:
  description: The image configuration (labels are in C(config.Labels)).
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    architecture: amd64
    os: linux
    config:
      Labels:
        operators.operatorframework.io.index.configs.v1: /configs
    rootfs:
      type: layers
      diff_ids: [sha256:1c2d...]
labels:
  description: The image labels (same as C(config.config.Labels)).
  returned: unless O(dockerfile_only=true)
  type: dict
  sample:
    operators.operatorframework.io.index.configs.v1: /configs
dockerfile:
  description: The Dockerfile C(opm generate dockerfile) would write for O(path), O(base_image), O(builder_image)
    and O(labels) (byte for byte).
  returned: always
  type: str
  sample: "# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\nFROM ..."
pushed:
  description: Whether the manifest was (or, in check mode, would be) pushed.
  returned: when O(push=true)
  type: bool
blobs:
  description: Blob counts of the push; V(exists) (already in the repository), V(mounted) (cross-repository
    mount), V(uploaded), V(copied) (base layers downloaded from another registry and uploaded).
  returned: when O(push=true)
  type: dict
  sample: {exists: 0, mounted: 1, uploaded: 2, copied: 0}
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.image import (
    CATALOG_IMAGE_UNUSED,
    execute,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    SCRATCH,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module


def argspec():
    spec = dict(
        path=dict(type="path", required=True),
        image=dict(type="str"),
        base_image=dict(type="str", default=SCRATCH),
        builder_image=dict(type="str", default="quay.io/operator-framework/opm:latest"),
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
    run_module(module, execute, unused=CATALOG_IMAGE_UNUSED)


if __name__ == "__main__":
    main()
