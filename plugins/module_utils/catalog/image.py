# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalog_image module's rules, from module parameters (no Ansible import): which options go together, the
Dockerfile ``opm generate dockerfile`` would write, which registry clients (and credentials) the base-image pull and
the push use, the image facts the module returns, and its run (``execute``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.dockerfile import CONFIGS_LABEL, fbc_root_name, generate_dockerfile
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import REGISTRY_OPTION_NAMES, registry_client_kwargs
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    CONFIGS_DIR,
    SCRATCH,
    BaseImage,
    build_catalog_image,
    push_image,
    write_oci_layout,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

# The tag an OCI layout's index.json names the image by when O(image) has none (or is not set).
DEFAULT_LAYOUT_TAG = "latest"


def _builds(params):
    return not params["dockerfile_only"]


def _explicit_credentials_used(params):
    """registry_username/registry_password go to the registry of ``image``: pushed to, or the base pulled from it."""
    if params["push"] or params["dockerfile_only"]:  # (dockerfile_only: that rule names them)
        return True
    base = params.get("base_image")
    if not params.get("image") or not base or base == SCRATCH:
        return False
    try:
        return same_registry(parse_reference(params["image"]), parse_reference(base))
    except ValueError:
        return True  # the module refuses the reference itself, with a better message


# What a bundle image (no base: the registry is only pushed to) and a catalog image do with their options.
BUILD_UNUSED = Unused(
    ("image", "push", "oci_layout", "manifest_format", "platform") + REGISTRY_OPTION_NAMES, _builds, "with dockerfile_only=true (nothing is built)"
)
BUNDLE_IMAGE_UNUSED = (
    BUILD_UNUSED,
    Unused(REGISTRY_OPTION_NAMES, lambda p: p["push"] or p["dockerfile_only"], "without push=true (a bundle image has no base image to pull)"),
)
CATALOG_IMAGE_UNUSED = (
    BUILD_UNUSED,
    Unused(
        REGISTRY_OPTION_NAMES,
        lambda p: p["push"] or p["dockerfile_only"] or p["base_image"] != SCRATCH,
        "without push=true or a base_image to pull (the scratch base is not pulled)",
    ),
    Unused(
        ("registry_username", "registry_password"),
        _explicit_credentials_used,
        "without push=true unless base_image is on the registry of image (other registries get credentials from docker_config only)",
    ),
)


def check_image_params(params):
    """Refuse option combinations the argument spec cannot express (``PublishError``, the module's message)."""
    configs = (params.get("labels") or {}).get(CONFIGS_LABEL)
    if configs is not None and str(configs) != CONFIGS_DIR:
        raise PublishError(f"labels: {CONFIGS_LABEL}={excerpt(configs)!r} contradicts where the catalog is ({CONFIGS_DIR}); it cannot be changed")
    if not os.path.isdir(params["path"]):
        raise PublishError("path %s is not a directory" % params["path"])


def catalog_dockerfile(path, base_image, builder_image, labels=None):
    """The text ``opm generate dockerfile`` writes for the FBC root ``path`` (``ADD <dirname> /configs``); label
    keys and values are converted to strings."""
    _parent, name = fbc_root_name(path)
    extra = dict((str(k), str(v)) for k, v in (labels or {}).items())
    return generate_dockerfile(name, base_image=base_image, builder_image=builder_image, extra_labels=extra)


def same_registry(a, b):
    """Whether two ``ImageReference`` live on the same registry host (host names compare case-insensitively)."""
    return a is not None and b is not None and a.registry.lower() == b.registry.lower()


def explicit_credentials_apply(target, ref):
    """Whether ``registry_username``/``registry_password`` (the credentials of the registry of ``target``, the image
    pushed) may be sent to the registry of ``ref``: only when it is the same registry. Other registries get
    credentials from the docker config only, so an explicit password never reaches a registry it was not given for.
    """
    return same_registry(target, ref)


def registry_clients(params, target, base_ref=None, client_factory=None):
    """``(base client, push client)`` for the base-image pull and the push (each None when not needed).

    The push client (``params["push"]``) gets the explicit credentials. The base client gets them only when the
    base lives on the registry of ``target`` (:func:`explicit_credentials_apply`); then, when pushing too, it is the
    push client itself, so both share one session (challenge and tokens) and the push can mount the base layers.
    ``client_factory``: defaults to ``oci.client.client_for``.
    """
    client_factory = client_factory or client_for
    push_client = client_factory(target, **registry_client_kwargs(params)) if params.get("push") else None
    base_client = None
    if base_ref is not None:
        shared = explicit_credentials_apply(target, base_ref)
        if shared and push_client is not None:
            base_client = push_client
        else:
            base_client = client_factory(base_ref, **registry_client_kwargs(params, credentials=shared))
    return base_client, push_client


def image_facts(image, target=None, keep_tag=True):
    """The module's image results: digest, media type, manifest, config, labels, and ``image``
    (``registry/repository[:tag]@digest``; without the tag when ``keep_tag`` is false, the form containers/image,
    and so opm, catalogd and operator-controller, can pull) when there is a target reference."""
    facts = dict(digest=image.digest, media_type=image.media_type, manifest=image.manifest, config=image.config, labels=image.labels)
    if target is not None:
        tag = ":" + target.tag if target.tag and keep_tag else ""
        facts["image"] = "%s%s@%s" % (target.name, tag, image.digest)
    return facts


def layout_tag(target):
    """The tag an OCI layout's ``index.json`` names the image by: the tag of ``target``, else ``latest``."""
    return (target.tag if target is not None else None) or DEFAULT_LAYOUT_TAG


def publish_image(params, result, target, build, check_mode=False, diff=False, keep_tag=True):
    """What catalog_image and bundle_image do with a built image, updating and returning ``result``: write the
    Dockerfile (``dockerfile_path``, ``result["dockerfile"]``), then unless ``dockerfile_only`` call
    ``build() -> (image, push client or None)`` inside the same file output, write the OCI layout (``oci_layout``),
    commit the files atomically, and push. ``changed`` counts files, layout blobs and the push."""
    image = push_client = None
    with FileOutput(check_mode=check_mode, diff=diff) as out:
        if params["dockerfile_path"]:
            out.write(params["dockerfile_path"], result["dockerfile"])
        if not params["dockerfile_only"]:
            image, push_client = build()
            result.update(image_facts(image, target, keep_tag=keep_tag))
            if params["oci_layout"]:
                # blobs missing from the layout count as changes without being staged in `out`
                result["changed"] = write_oci_layout(image, params["oci_layout"], tag=layout_tag(target), output=out)
        out.commit()
    result["changed"] |= out.changed
    if diff:
        result["diff"] = out.diffs
    if push_client is not None:
        result["pushed"], result["blobs"] = push_image(push_client, target, image, check_mode=check_mode)
        result["changed"] |= result["pushed"]
    return result


def execute(module):
    p = module.params
    check_image_params(p)
    result = dict(changed=False, dockerfile=catalog_dockerfile(p["path"], p["base_image"], p["builder_image"],
                                                               p["labels"]))
    target = parse_reference(p["image"]) if p["image"] and not p["dockerfile_only"] else None

    def build():
        base_ref = parse_reference(p["base_image"]) if p["base_image"] != SCRATCH else None
        base_client, push_client = registry_clients(p, target, base_ref)
        base = BaseImage.pull(base_ref, base_client, platform=p["platform"]) if base_ref is not None else None
        image = build_catalog_image(p["path"], labels=p["labels"], base=base, manifest_format=p["manifest_format"], platform=p["platform"])
        return image, push_client

    return publish_image(p, result, target, build, check_mode=module.check_mode, diff=module._diff)
