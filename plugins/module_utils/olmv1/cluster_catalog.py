# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM v1 ClusterCatalogs (``olm.operatorframework.io/v1``, cluster-scoped): the object we apply and catalogd's
verdict on it (pure).

catalogd (operator-controller ``internal/catalogd/controllers/core/clustercatalog_controller.go``) writes two
conditions, each with ``observedGeneration``:

- ``Progressing``: ``True/Succeeded`` after an unpack, ``True/Retrying`` with the error on a transient failure (an
  image that cannot be pulled is one: catalogd keeps retrying, also for a tag that does not exist, which the
  verdict treats as final), ``False/Blocked`` on a terminal one;
- ``Serving``: ``True/Available`` with ``status.resolvedSource.image.ref`` (the digest) and ``status.urls.base`` once
  the content is served, ``False/Unavailable``, or ``False/UserSpecifiedUnavailable`` with
  ``spec.availabilityMode: Unavailable``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import InvalidReferenceError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, condition_current, describe_conditions, status

API_VERSION = "olm.operatorframework.io/v1"
KIND = "ClusterCatalog"
# catalogd's mutating webhook sets this label to the object's name; selectors of ClusterExtensions use it. The
# module sets it too, so catalogs it creates are selectable by name on clusters without that webhook.
NAME_LABEL = "olm.operatorframework.io/metadata.name"

AVAILABLE = "Available"
UNAVAILABLE = "Unavailable"
AVAILABILITY_MODES = (AVAILABLE, UNAVAILABLE)

# Verdicts of cluster_catalog_verdict().
VERDICT_READY = "ready"
VERDICT_WAITING = "waiting"
VERDICT_FAILED = "failed"

# spec.priority is an int32 (api/v1/clustercatalog_types.go: Minimum -2147483648, Maximum 2147483647).
_INT32 = (-(2**31), 2**31 - 1)


class ClusterCatalogError(KubeforgeError):
    """A ClusterCatalog request the API server or catalogd would reject."""


def cluster_catalog_definition(name, image, poll_interval_minutes=None, priority=None, availability_mode=None, labels=None):
    """The ClusterCatalog to apply (only the fields the user set).

    ``image`` is a tag or digest reference; a poll interval is refused with a digest (the CRD's CEL rule: a digest
    never changes, so there is nothing to poll). Raises ``ClusterCatalogError``.
    """
    try:
        ref = parse_reference(image)
    except InvalidReferenceError as exc:
        raise ClusterCatalogError(f"image: {exc}") from None
    source = {"ref": image}
    if poll_interval_minutes is not None:
        if isinstance(poll_interval_minutes, bool) or not isinstance(poll_interval_minutes, int) or poll_interval_minutes < 1:
            raise ClusterCatalogError(f"poll_interval_minutes must be a whole number of minutes >= 1, not {excerpt(poll_interval_minutes)!r}")
        if ref.digest:
            raise ClusterCatalogError(
                f"poll_interval_minutes cannot be used with the digest reference {image!r}: a digest never changes, so catalogd "
                "has nothing to poll (use a tag to follow updates)"
            )
        source["pollIntervalMinutes"] = poll_interval_minutes
    spec = {"source": {"type": "Image", "image": source}}
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not _INT32[0] <= priority <= _INT32[1]:
            raise ClusterCatalogError(f"priority must be a 32-bit integer, not {excerpt(priority)!r}")
        spec["priority"] = priority
    if availability_mode is not None:
        if availability_mode not in AVAILABILITY_MODES:
            raise ClusterCatalogError(f"availability_mode must be one of {', '.join(AVAILABILITY_MODES)}, not {excerpt(availability_mode)!r}")
        spec["availabilityMode"] = availability_mode
    all_labels = dict((str(k), str(v)) for k, v in (labels or {}).items())
    if all_labels.get(NAME_LABEL, name) != name:
        raise ClusterCatalogError(f"label {NAME_LABEL} must be the catalog's name {name!r}")
    all_labels[NAME_LABEL] = name
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name, "labels": all_labels}, "spec": spec}


def resolved_ref(obj):
    """``status.resolvedSource.image.ref`` (the image by digest catalogd serves), or None."""
    return ((status(obj).get("resolvedSource") or {}).get("image") or {}).get("ref") or None


def base_url(obj):
    """``status.urls.base``: where catalogd serves the catalog's content (``<base>/api/v1/all``), or None."""
    return (status(obj).get("urls") or {}).get("base") or None


def describe(obj):
    """One line with catalogd's conditions (type=status/reason: message), or ``no status yet``."""
    return describe_conditions(obj, ("Progressing", "Serving"))


# Retrying messages of an image pull that no retry fixes while a module waits (the registry's own error codes, as
# containers/image words them): the tag or repository does not exist, or the registry refuses catalogd's credentials.
PERMANENT_PULL_ERRORS = re.compile(
    r"manifest unknown|name unknown|unauthorized|authentication required|requested access to the resource is denied"
    # an image that is not a catalog, content catalogd cannot store, a registry certificate it does not trust, no
    # image for its platform: catalogd retries a tag (it may be pushed again), but nothing on the cluster fixes it
    r"|catalog image is missing the required label|error storing fbc|x509: |no matching manifest|no child with platform"
)


def cluster_catalog_verdict(obj):
    """``(verdict, message)``: ``ready`` once catalogd has handled the current generation and serves it (or, with
    ``availabilityMode: Unavailable``, reports it unavailable as asked); ``failed`` on ``Progressing=False``
    (a terminal error) or a ``Retrying`` pull error in PERMANENT_PULL_ERRORS; else ``waiting`` (including other
    ``Retrying`` errors, whose message is returned)."""
    if obj is None:
        return VERDICT_WAITING, "the ClusterCatalog does not exist"
    progressing = condition(obj, "Progressing")
    serving = condition(obj, "Serving")
    if condition_current(progressing, obj) and progressing.get("status") == "False":
        return VERDICT_FAILED, describe(obj)
    if condition_current(progressing, obj) and progressing.get("reason") == "Retrying" and PERMANENT_PULL_ERRORS.search(progressing.get("message") or ""):
        return VERDICT_FAILED, describe(obj)
    if not condition_current(progressing, obj) or progressing.get("reason") != "Succeeded":
        return VERDICT_WAITING, describe(obj)
    if (obj.get("spec") or {}).get("availabilityMode") == UNAVAILABLE:
        if serving and serving.get("status") == "False" and serving.get("reason") == "UserSpecifiedUnavailable":
            return VERDICT_READY, describe(obj)
        return VERDICT_WAITING, describe(obj)
    if condition_current(serving, obj) and serving.get("status") == "True" and resolved_ref(obj):
        return VERDICT_READY, describe(obj)
    return VERDICT_WAITING, describe(obj)


def settled(obj):
    """Watch predicate: catalogd has reached a verdict other than ``waiting``."""
    return cluster_catalog_verdict(obj)[0] != VERDICT_WAITING


# --- contents (olm_cluster_catalog_info) --------------------------------------------------------------------------


def only_package(cfg, package):
    """A DeclarativeConfig with only ``package``'s blobs of ``cfg`` (``cfg`` itself when ``package`` is None)."""
    if package is None:
        return cfg
    return DeclarativeConfig(
        packages=[p for p in cfg.packages if p.get("name") == package],
        channels=[c for c in cfg.channels if c.get("package") == package],
        bundles=[b for b in cfg.bundles if b.get("package") == package],
        deprecations=[d for d in cfg.deprecations if d.get("package") == package],
    )


def contents_summary(cfg):
    """``(packages, problems)``: per package of the FBC ``cfg`` (sorted by name) its default channel, description,
    deprecation message and channels (by name: head, head version, versions in order, entries with version and
    deprecation) - the shape ``olm_operator_info`` reports for an OLM v0 catalog - and the messages of what the
    catalog gets wrong (a channel without one head, an entry without a bundle), which do not stop the report."""
    # The model (dataclasses) is imported on use: the other users of this file wait on catalogd, not on FBC.
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model

    problems = []
    model = convert_to_model(cfg, collect=problems)
    packages = []
    for name in sorted(model):
        pkg = model[name]
        channels = []
        for channel_name in sorted(pkg.channels):
            channel = pkg.channels[channel_name]
            try:
                head = channel.head()
            except FBCError as exc:
                problems.append(f"package {name}, channel {channel_name}: {exc}")
                head = None
            ordered = sorted(channel.bundles.values(), key=lambda b: (b.version, b.release, b.name))
            channels.append(
                {
                    "name": channel_name,
                    "head": head.name if head else None,
                    "head_version": head.version_string() if head else None,
                    "versions": [b.version_string() for b in ordered],
                    "entries": [
                        {"name": b.name, "version": b.version_string(), "deprecated": b.deprecation.message if b.deprecation else None} for b in ordered
                    ],
                    "deprecated": channel.deprecation.message if channel.deprecation else None,
                }
            )
        packages.append(
            {
                "name": name,
                "default_channel": pkg.default_channel.name if pkg.default_channel else None,
                "description": pkg.description or None,
                "deprecated": pkg.deprecation.message if pkg.deprecation else None,
                "channels": channels,
            }
        )
    return packages, problems
