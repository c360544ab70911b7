#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_mirror
short_description: Mirror an operator catalog and the images of its operators for a disconnected cluster
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Copies a catalog image's operators - every bundle image and every related image the kept bundles name - to a
    mirror registry by digest, pushes the catalog rebuilt with only the kept operators, and writes what a cluster
    needs to pull from the mirror - an ImageDigestMirrorSet, an ImageTagMirrorSet, a CatalogSource (OLM v0), a
    ClusterCatalog (OLM v1) and a C(source=mirror) mapping. In pure Python - no oc-mirror, opm, skopeo or
    container engine.
  - Images keep their repository path under the mirror, as oc-mirror v2 names them
    (V(quay.io/ns/app@sha256:...) becomes V(<mirror>/ns/app@sha256:...)). Image indexes are copied whole (every
    platform), blobs are streamed from registry to registry (never a whole layer in memory), blobs another
    repository of the mirror holds are mounted, and manifests are written after everything they name, so a run
    that was interrupted is resumed by running it again - what the mirror holds by digest is skipped.
  - Every image is read before anything is copied - a selection the catalog cannot satisfy, or an image the source
    registry does not have, fails before the first copy (an image the cluster does not need, such as a placeholder,
    is left out with O(blocked_images)); failures while copying are collected and reported at the end in
    RV(failed_images), with the images that did copy.
  - The source catalog image itself is copied too, by digest, into the repository of the rebuilt catalog (its layers
    are the rebuilt catalog's base layers) - it is the first of RV(images), in both a direct run and a run from
    O(from_dir). The rebuilt catalog is reported in RV(catalog), not in RV(images) or RV(totals).
  - Across an air gap - O(to_dir) writes the images and the rebuilt catalog into an OCI image layout directory;
    carried to the other side, O(from_dir) pushes them to the mirror and writes the cluster resources there.
  - The rebuilt catalog is each platform image of the source catalog with the kept operators in an opaque layer
    over its catalog directory (nothing of the old catalog shows through). opm's pre-built serve cache cannot be
    rebuilt without opm, so an C(opm serve --cache-dir) command gets C(--cache-enforce-integrity=false) and opm
    rebuilds the cache at start.
  - Does not need a Kubernetes cluster; apply the written resources with M(kubernetes.core.k8s) or C(oc apply).
options:
  source_image:
    description:
      - The catalog image to mirror (V(registry.redhat.io/redhat/redhat-operator-index:v4.20)), read like
        C(opm render) reads it - the directory its C(operators.operatorframework.io.index.configs.v1) label names.
      - Exactly one of O(source_image) and O(from_dir) is required.
    type: str
    version_added: 0.1.0
  from_dir:
    description:
      - An OCI image layout directory written by an earlier run with O(to_dir) - pushed to O(mirror) whole
        (the selection was made when it was written).
    type: path
    version_added: 0.1.0
  mirror:
    description:
      - The mirror registry, V(host[:port]) with an optional path prefix
        (V(mirror.example.com:5000/operators)).
      - Exactly one of O(mirror) and O(to_dir) is required.
    type: str
    version_added: 0.1.0
  to_dir:
    description:
      - Write the images and the rebuilt catalog into this OCI image layout directory instead of a registry
        (created if needed; a directory written before is added to, and what it holds is skipped). Its
        C(index.json) names every image by its source reference.
    type: path
    version_added: 0.1.0
  blocked_images:
    description:
      - Images of the kept bundles not to mirror, as oc-mirror v2's C(mirror.blockedImages[].name) - regular
        expressions, one matching anywhere in the reference as the catalog names it (V(^quay[.]io/example/debug)).
        They are left out of the copy, the mirror sets and the mapping, and listed in RV(blocked); the catalog still
        names them.
    type: list
    elements: str
    default: []
    version_added: 0.1.0
  catalog_image:
    description:
      - Where the rebuilt catalog goes in the mirror, as a repository and a tag on the O(mirror) registry
        (V(mirror.example.com:5000/operators/my-index:v4.20)). Default - its source repository under O(mirror), with
        the source's tag (V(latest) for a digest).
    type: str
    version_added: 0.1.0
  platforms:
    description:
      - Copy only these platforms (C(os/arch[/variant]), for example V(linux/amd64)) of every image index - bundle,
        related and catalog images. Default - image indexes whole, every platform.
      - An index is copied unchanged, so every digest a catalog, a CSV or an ImageDigestMirrorSet names stays valid,
        with only the chosen platforms' images and their blobs (a sparse index; attestations of a chosen image
        come along). A node pulls its own platform from it as from the source.
      - Registries that check that every image an index lists is there refuse a sparse index - Docker's
        distribution registry does, and the image fails with that reason; Quay takes it with
        C(FEATURE_SPARSE_INDEX); an image layout directory (O(to_dir)) always takes it. An index with none of the
        platforms fails. An image that is not an index is copied as it is.
      - The rebuilt catalog image lists the chosen platforms only (a new, complete index).
    type: list
    elements: str
    version_added: 0.1.0
  concurrency:
    description: How many images are read and copied at once (1 to 16).
    type: int
    default: 4
    version_added: 0.1.0
  manifests_dir:
    description:
      - Write the cluster resources here - C(imagedigestmirrorset.yaml), C(imagetagmirrorset.yaml) (only when the
        catalog names images by tag), C(catalogsource.yaml), C(clustercatalog.yaml) - and C(mapping.txt).
        Without it they are only returned.
    type: path
    version_added: 0.1.0
  resource_name:
    description:
      - Name of the ImageDigestMirrorSet, ImageTagMirrorSet, CatalogSource and ClusterCatalog. Default - the
        catalog repository's last part and tag (V(redhat-operator-index-v4-20)); give the original
        CatalogSource's name to keep it (V(redhat-operators)).
    type: str
    version_added: 0.1.0
  catalog_source_namespace:
    description: Namespace of the CatalogSource.
    type: str
    default: openshift-marketplace
    version_added: 0.1.0
  source_registry_username:
    description:
      - B(Registry access.) Username for the registry of O(source_image) (used for every image on that registry).
        Without it, the source registries' credentials come from O(docker_config) - or, with O(to_dir) only, from
        O(registry_username).
      - When the source catalog and O(mirror) are on the same registry, one set of credentials reaches both - give
        O(registry_username) alone.
    type: str
    version_added: 0.1.0
  source_registry_password:
    description:
      - B(Registry access.) Password or token for O(source_registry_username). It is never logged or returned.
    type: str
    version_added: 0.1.0
notes:
  - 'Credentials, per registry: O(registry_username) and O(registry_password) are the mirror''s (O(mirror)); with
    O(to_dir), where no registry is written to, they are the source catalog registry''s, as O(source_registry_username)
    and O(source_registry_password) are (give one pair, not both). Every other registry - and the source''s, when no
    source credentials are given - gets its credentials from the auth files O(docker_config) says.'
  - 'Names in the result: RV(catalog.image) is the rebuilt catalog by digest only (C(<mirror>/<repository>@sha256:...)),
    the form catalogd, OLM v0 and CRI-O take (catalogd refuses a reference with both a tag and a digest); it is also
    tagged in the mirror (O(catalog_image)''s tag). RV(images[].mirror) has the form of RV(images[].source) - by digest
    when the source is, else by tag - and each RV(mapping) line is C(<images[].source>=<images[].mirror>). With
    O(to_dir) they are C(oci:<dir>:<name>) references into the layout, as skopeo and podman take them.'
  - The ImageDigestMirrorSet covers the images the catalog names by digest, the ImageTagMirrorSet those it names by
    tag (without a digest, a node pulls them from the source unless the ImageTagMirrorSet is applied); released
    catalogs name bundles by digest, as M(kubeforge.operators.bundle_image) returns them. The source catalog is in
    neither - the cluster pulls the rebuilt catalog from the mirror by digest.
  - The source images are read as the catalog names them, not through registries.conf mirrors.
  - The mirror registry needs no tag for the images it gets by digest; it must keep untagged manifests (a
    registry's garbage collection with C(--delete-untagged) removes them).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.registry_auth
  - kubeforge.operators.catalog_select
attributes:
  check_mode:
    support: full
    details: Returns the plan - every image with its size and whether the mirror holds it, and the total to copy.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Mirror two operators of a catalog, one of them from version 1.2.0 on
  kubeforge.operators.catalog_mirror:
    source_image: registry.example.com/catalogs/index:v4.20
    select:
      packages:
        - name: kube-green
        - name: example-operator
          min_version: 1.2.0
    mirror: mirror.example.com:5000/operators
    manifests_dir: mirror-resources
  register: mirrored

- name: Across an air gap, first to disk on the connected side
  kubeforge.operators.catalog_mirror:
    source_image: registry.example.com/catalogs/index:v4.20
    select:
      packages:
        - name: kube-green
    to_dir: /media/transfer/operators

- name: Then from disk to the mirror on the disconnected side
  kubeforge.operators.catalog_mirror:
    from_dir: /media/transfer/operators
    mirror: mirror.internal:5000/operators
    manifests_dir: mirror-resources

- name: Show what a mirror would copy, and how much
  kubeforge.operators.catalog_mirror:
    source_image: registry.example.com/catalogs/index:v4.20
    mirror: mirror.example.com:5000/operators
  check_mode: true
  register: plan
"""

RETURN = r"""
images:
  description: Every image of the mirror (the catalog's first), with where it went and what happened to it.
  returned: always
  type: list
  elements: dict
  contains:
    source:
      description:
        - The image as the catalog names it (from O(from_dir), as the directory's C(index.json) names it); the
          first, the source catalog, by the digest that was read (RV(catalog.source)).
      type: str
      sample: quay.io/example/operator@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
    mirror:
      description:
        - The copy in the mirror, in the form of RV(images[].source) - by digest only when the source names a
          digest, else by its tag (pushed by digest and that tag). The line of RV(mapping) pairs the two.
        - With O(to_dir), the copy in the layout directory as C(oci:<dir>:<index.json name>) (skopeo and podman's
          reference to an image of an OCI layout).
      type: str
      sample: mirror.example.com:5000/operators/example/operator@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
    digest:
      description: Its manifest digest (of the index, for an index).
      type: str
    size:
      description: Bytes of its manifests and blobs.
      type: int
    state:
      description:
        - V(present) - the mirror held it already; V(copied); V(missing) in check mode - it would be copied;
          V(failed) - it could not be copied (see RV(failed_images)).
      type: str
    bundles:
      description: The bundles that name it (empty for the catalog).
      type: list
      elements: str
totals:
  description: Counts and bytes of RV(images) (the rebuilt catalog is not counted).
  returned: always
  type: dict
  contains:
    images:
      description: Images in the mirror set - the source catalog and the images of the kept bundles.
      type: int
    present:
      description: Images the mirror held already.
      type: int
    copied:
      description:
        - Images copied by this run (in check mode, that would be); on a failure, those that did copy - the count
          the failure message gives.
      type: int
    failed:
      description: Images that could not be copied (then the task fails, listing them in RV(failed_images)).
      type: int
      version_added: 0.1.0
    bytes:
      description: Bytes of every image.
      type: int
    bytes_to_copy:
      description: Bytes of the images not in the mirror before.
      type: int
    blobs_uploaded:
      description: Blobs streamed to the mirror.
      type: int
    blobs_mounted:
      description: Blobs mounted from another repository of the mirror.
      type: int
catalog:
  description: The rebuilt catalog.
  returned: always
  type: dict
  contains:
    source:
      description:
        - The source catalog image by the digest that was read (C(<registry>/<repository>@sha256:...)); its copy is
          the first of RV(images). From O(from_dir), the source catalog the directory was written from.
      type: str
      sample: registry.example.com/catalogs/index@sha256:0c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6e7
    image:
      description:
        - The rebuilt catalog in the mirror by digest only, as a CatalogSource's C(spec.image) or a ClusterCatalog's
          C(spec.source.image.ref) takes it (the two resources in RV(resources) name it so). It is also tagged in
          the mirror with O(catalog_image)'s tag.
        - With O(to_dir), C(oci:<dir>:<index.json name>) - the directory lists it under its tag.
        - Empty in check mode when it was not pushed before.
      type: str
      sample: mirror.example.com:5000/operators/catalogs/index@sha256:9d0e1f2a3b4c5d65f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a
    digest:
      description: Its digest.
      type: str
    packages:
      description: The packages it keeps (from O(from_dir), read from the rebuilt catalog in the directory).
      type: list
      elements: str
resources:
  description: The cluster resources, as written to O(manifests_dir).
  returned: with O(mirror)
  type: dict
  contains:
    image_digest_mirror_set:
      description:
        - The ImageDigestMirrorSet (config.openshift.io/v1), one entry per source repository of the images of the
          kept bundles the catalog names by digest, or null when it names none so. Not the source catalog's
          repository (the cluster pulls the rebuilt catalog from the mirror).
      type: dict
    image_tag_mirror_set:
      description: The ImageTagMirrorSet of the images named by tag, or null when no image is named by tag.
      type: dict
    catalog_source:
      description: The CatalogSource (OLM v0) serving the rebuilt catalog.
      type: dict
    cluster_catalog:
      description: The ClusterCatalog (OLM v1) of the rebuilt catalog.
      type: dict
blocked:
  description: The images of the kept bundles that O(blocked_images) left out.
  returned: always
  type: list
  elements: str
mapping:
  description:
    - C(source=mirror) lines, one per image of RV(images) (C(<images[].source>=<images[].mirror>)), sorted - the
      source catalog's from its digest to its copy by digest. The rebuilt catalog is no copy of a source image and
      has no line (it is RV(catalog.image)), so C(oc image mirror -f mapping.txt) repeats the copies and never
      overwrites it.
  returned: with O(mirror)
  type: list
  elements: str
failed_images:
  description:
    - On a failure, the images that could not be looked up (then nothing was copied) or copied, each with its error.
      Ansible sets a failed module's C(failed) to V(true), so the list has this name.
  returned: on failure, when images failed
  type: list
  elements: dict
  version_added: 0.1.0
  contains:
    source:
      description: The image (RV(images[].source)).
      type: str
    error:
      description: Why it failed.
      type: str
files:
  description: The files written to O(manifests_dir).
  returned: with O(manifests_dir)
  type: list
  elements: str
warnings:
  description: Notes of the selection (a channel a range left empty).
  returned: when there are any
  type: list
  elements: str
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.args import select_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror_run import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

UNUSED = (
    Unused(("select", "blocked_images"), lambda p: not p["from_dir"], "with from_dir (the selection was made when the directory was written)"),
    Unused(
        ("catalog_image", "manifests_dir", "resource_name", "catalog_source_namespace"),
        lambda p: not p["to_dir"],
        "with to_dir (they describe the mirror registry, which the run from the directory writes)",
    ),
    Unused(("source_registry_username", "source_registry_password"), lambda p: not p["from_dir"], "with from_dir (no source registry is read)"),
)


def argspec():
    spec = dict(
        source_image=dict(type="str"),
        from_dir=dict(type="path"),
        mirror=dict(type="str"),
        to_dir=dict(type="path"),
        select=select_argspec(),
        blocked_images=dict(type="list", elements="str", default=[]),
        catalog_image=dict(type="str"),
        platforms=dict(type="list", elements="str"),
        concurrency=dict(type="int", default=4),
        manifests_dir=dict(type="path"),
        resource_name=dict(type="str"),
        catalog_source_namespace=dict(type="str", default="openshift-marketplace"),
        source_registry_username=dict(type="str"),
        source_registry_password=dict(type="str", no_log=True),
    )
    spec.update(registry_argspec())
    return spec


def main():
    module = MaskingAnsibleModule(
        argument_spec=argspec(),
        supports_check_mode=True,
        mutually_exclusive=[("source_image", "from_dir"), ("mirror", "to_dir")],
        required_one_of=[("source_image", "from_dir"), ("mirror", "to_dir")],
    )
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
