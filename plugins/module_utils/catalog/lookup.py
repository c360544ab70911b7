# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bundle lookup for template renders, from module parameters: FBC catalogs and bundle directories given
offline, and an OCI puller used only for images found nowhere else."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import shutil
import tempfile

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    BundleLookup,
    is_bundle_dir,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleNotFoundError,
    PublishError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import shown_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_client_kwargs


def puller_factory(params):
    """A factory for the OCI image puller built from module params (None when ``pull`` is false)."""
    if not params.get("pull", True):
        return None

    def factory():
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import make_image_puller
        return make_image_puller(**registry_client_kwargs(params))
    return factory


@contextlib.contextmanager
def pulled_catalog(params):
    """``with pulled_catalog(params) as (path, image):`` the file-based catalog of ``params["source_image"]`` pulled
    into a temporary directory (removed afterwards) with the registry options, and ``{ref, digest}`` of the image."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog

    directory = tempfile.mkdtemp(prefix="kubeforge-catalog-")
    try:
        path, pulled = pull_catalog(params["source_image"], directory, **registry_client_kwargs(params))
        yield path, {"ref": pulled.ref, "digest": pulled.digest}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _image_tag_and_name(image):
    """(last repository path component, tag or None) of an image reference, without a full parse."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = last.split(":", 1)
        return name, tag
    return last, None


class BundleDirIndex:
    """Bundle directories given without an image: matched to a template image by tag (= CSV version, with or without
    a leading ``v``, or the directory name), preferring directories whose package is the repository name."""

    def __init__(self, paths=()):
        self.entries = []
        for p in paths:
            blob, _csv = render_bundle_dir_blob(p)
            version = ""
            for prop in blob.get("properties") or ():
                if prop.get("type") == "olm.package" and isinstance(prop.get("value"), dict):
                    version = str(prop["value"].get("version") or "")
            self.entries.append({"path": p, "package": blob.get("package") or "", "version": version,
                                 "name": blob.get("name") or "", "dirname": os.path.basename(os.path.normpath(p))})

    def near_matches(self, image):
        """``"; bundle directories: <package> <version> (<path>), ..."`` for directories of the image's package (by
        repository name), else every directory when there are a few; ``""`` when there are none."""
        repo = _image_tag_and_name(image)[0]
        mine = [e for e in self.entries if e["package"] == repo] or (self.entries if len(self.entries) <= 5 else [])
        shown = ["%s %s (%s)" % (e["package"] or "?", e["version"] or "?", e["dirname"]) for e in mine[:5]]
        return "; bundle directories: %s" % ", ".join(shown) if shown else ""

    def match(self, image):
        repo, tag = _image_tag_and_name(image)
        if not tag:
            return None
        hits = [e for e in self.entries if tag in (e["version"], "v" + e["version"], e["dirname"]) and e["version"]]
        if not hits:
            return None
        best = [e for e in hits if e["package"] == repo] or hits
        return best[0]["path"]


def build_lookup(lookup_paths=(), bundle_images=None, puller_factory=None, catalogs=()):
    """A BundleLookup over FBC catalogs (paths or DeclarativeConfigs) and bundle directories.

    ``lookup_paths``: FBC directories/files or bundle directories. ``bundle_images``: explicit image -> bundle
    directory. ``puller_factory()`` returns an ``image_puller`` (called lazily, only when an image is missing);
    None means offline (missing images raise BundleNotFoundError). Returns ``(lookup, state)``; ``state['puller']``
    holds the puller once created (the caller cleans it up).
    """
    cats = list(catalogs)
    dirs = []
    for p in lookup_paths or ():
        p = os.fspath(p)
        if not os.path.exists(p):
            raise PublishError("bundle_lookup path %s does not exist" % p)
        if os.path.isdir(p) and is_bundle_dir(p):
            dirs.append(p)
        else:
            cats.append(p)
    index = BundleDirIndex(dirs)
    state = {"puller": None, "pulled": []}

    def image_puller(image):
        path = index.match(image)
        if path is not None:
            return path
        if puller_factory is None:
            raise BundleNotFoundError("bundle image %s not found in the lookup catalogs or bundle directories "
                                      "(pulling is disabled)%s" % (json.dumps(shown_reference(image)), index.near_matches(image)))
        if state["puller"] is None:
            state["puller"] = puller_factory()
        state["pulled"].append(image)
        return state["puller"](image)

    lookup = BundleLookup(cats, bundle_dirs=dict(bundle_images or {}), image_puller=image_puller)
    return lookup, state


def cleanup_lookup(state):
    puller = state.get("puller")
    if puller is not None and hasattr(puller, "cleanup"):
        puller.cleanup()
