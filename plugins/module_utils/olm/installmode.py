# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install modes and OperatorGroup targets (pure).

OLM matches an OperatorGroup's target namespaces against the CSV's ``installModes``: no targets (``[]``) is
``AllNamespaces``, exactly the operator's own namespace is ``OwnNamespace``, one other namespace is
``SingleNamespace``, several are ``MultiNamespace`` (``InstallModeSet.Supports``). Modes are looked up by
``type``, never by list position.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError

ALL_NAMESPACES = "AllNamespaces"
OWN_NAMESPACE = "OwnNamespace"
SINGLE_NAMESPACE = "SingleNamespace"
MULTI_NAMESPACE = "MultiNamespace"
INSTALL_MODES = (OWN_NAMESPACE, SINGLE_NAMESPACE, MULTI_NAMESPACE, ALL_NAMESPACES)

# The order in which a mode is chosen when the user names no targets: the operator's own namespace first (least
# privilege: namespaced RBAC, and no clash with another AllNamespaces group providing the same APIs, which OLM fails
# as InterOperatorGroupOwnerConflict), cluster-wide only for operators that support nothing else.
DEFAULT_PREFERENCE = (OWN_NAMESPACE, ALL_NAMESPACES)


class InstallModeError(KubeforgeError):
    """The requested or existing OperatorGroup does not fit the operator's install modes."""


def supported_modes(install_modes):
    """The set of supported mode types from a CSV's ``spec.installModes`` list."""
    return {m.get("type") for m in install_modes or [] if isinstance(m, dict) and m.get("supported")}


def mode_for_targets(targets, namespace):
    """The install mode a list of target namespaces means for an operator in ``namespace``."""
    targets = [t for t in targets or [] if t]
    if not targets:
        return ALL_NAMESPACES
    if targets == [namespace]:
        return OWN_NAMESPACE
    if len(targets) == 1:
        return SINGLE_NAMESPACE
    return MULTI_NAMESPACE


def operator_group_targets(og):
    """Target namespaces of an OperatorGroup: ``status.namespaces`` when OLM has resolved a selector, else spec."""
    spec = og.get("spec") or {}
    if spec.get("targetNamespaces") is not None:
        return list(spec.get("targetNamespaces") or [])
    if spec.get("selector"):
        resolved = (og.get("status") or {}).get("namespaces")
        return [n for n in resolved or [] if n]
    return []


def choose_targets(install_modes, namespace, target_namespaces=None):
    """Target namespaces for a new OperatorGroup, or raise ``InstallModeError`` naming the supported modes.

    ``install_modes`` may be None when the catalog does not tell (no PackageManifest API): then the user's
    targets are taken as given, and without them the operator's own namespace is the safest default.
    """
    if target_namespaces is not None:
        mode = mode_for_targets(target_namespaces, namespace)
        if install_modes is not None and mode not in supported_modes(install_modes):
            raise InstallModeError(_unsupported(mode, install_modes))
        return [t for t in target_namespaces if t]
    if install_modes is None:
        return [namespace]
    supported = supported_modes(install_modes)
    for mode in DEFAULT_PREFERENCE:
        if mode in supported:
            return [] if mode == ALL_NAMESPACES else [namespace]
    raise InstallModeError(
        "the operator supports only {} install mode(s): set target_namespaces to the namespace(s) it should watch".format(", ".join(sorted(supported)) or "no")
    )


# spec fields of an OperatorGroup a user may set besides its targets (operators.coreos.com/v1 OperatorGroupSpec).
OPERATOR_GROUP_SPEC_FIELDS = ("upgradeStrategy", "serviceAccountName", "selector")


def check_operator_group_spec(wanted, target_namespaces=None):
    """Refuse ``wanted`` (the user's extra OperatorGroup spec) when it holds other fields, or a ``selector`` together
    with target namespaces (OLM takes one or the other)."""
    unknown = sorted(set(wanted or {}) - set(OPERATOR_GROUP_SPEC_FIELDS))
    if unknown:
        hint = " (use target_namespaces)" if "targetNamespaces" in unknown else ""
        raise InstallModeError(f"operator_group_spec takes {', '.join(OPERATOR_GROUP_SPEC_FIELDS)}, not {', '.join(unknown)}{hint}")
    if (wanted or {}).get("selector") and target_namespaces is not None:
        raise InstallModeError("operator_group_spec.selector chooses the target namespaces by label: it cannot be combined with target_namespaces")


def operator_group_spec_differences(og, wanted):
    """The fields of ``wanted`` an existing OperatorGroup has otherwise, as ``field: have -> want`` strings."""
    have = og.get("spec") or {}
    return [f"{field}: {have.get(field)!r} -> {value!r}" for field, value in sorted((wanted or {}).items()) if have.get(field) != value]


def check_operator_group(og, install_modes, namespace, target_namespaces=None):
    """Raise ``InstallModeError`` if an existing OperatorGroup cannot host the operator (or differs from the request)."""
    targets = operator_group_targets(og)
    name = (og.get("metadata") or {}).get("name")
    if target_namespaces is not None and sorted(t for t in target_namespaces if t) != sorted(targets):
        raise InstallModeError(
            f"OperatorGroup {name} in {namespace} targets {targets or 'all namespaces'}, not the requested "
            f"{list(target_namespaces) or 'all namespaces'}; an OperatorGroup is shared by every operator in its namespace, "
            "so change it explicitly or install into another namespace"
        )
    if install_modes is not None:
        mode = mode_for_targets(targets, namespace)
        if mode not in supported_modes(install_modes):
            raise InstallModeError(f"OperatorGroup {name} in {namespace} means {mode}, but " + _unsupported(mode, install_modes))


def _unsupported(mode, install_modes):
    return "the operator does not support the {} install mode (supported: {})".format(mode, ", ".join(sorted(supported_modes(install_modes))) or "none")
