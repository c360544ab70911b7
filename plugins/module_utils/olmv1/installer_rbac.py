# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installer ServiceAccount of an OLM v1 ClusterExtension: least-privilege RBAC derived from registry+v1
bundles, and the bundles operator-controller v1.5.1 cannot install (pure).

operator-controller v1.5.1 renders a registry+v1 bundle into plain objects
(``internal/operator-controller/rukpak/render/registryv1``) and applies them with Helm as the ClusterExtension's
ServiceAccount (TokenRequest tokens). Helm gets, creates, patches, updates and deletes every object by name; the
content manager watches them through ``NamespaceAll`` informers filtered by the labels
``olm.operatorframework.io/owner-kind=ClusterExtension``, ``owner-name=<extension>`` (with the same credentials), so
``list`` and ``watch`` of every installed resource type must be granted cluster-wide. Helm's release storage uses
operator-controller's own client in its system namespace: the ServiceAccount needs nothing for it. RBAC escalation
prevention means the ServiceAccount must also hold every rule of every ClusterRole/Role it creates: the CSV's
``clusterPermissions``, its ``permissions`` (promoted to cluster permissions in AllNamespaces mode, with an extra
``get/list/watch namespaces`` rule) and the rules of ClusterRoles/Roles shipped in the bundle. Wildcards are
therefore granted exactly where the CSV (or a shipped role) grants them, as upstream's
``docs/howto/derive-service-account.md`` prescribes; nothing else is a wildcard.

- ``generated_rbac_names(csv)``: the ClusterRoles/ClusterRoleBindings (and Roles/RoleBindings outside
  AllNamespaces mode) v1.5.1 generates, with their exact names: ``<csv>-<serviceAccount>`` plus the base-36
  SHA-224 of the Go ``json.Encoder`` encoding of the permission (``DefaultUniqueNameGenerator``), cut to 63
  characters (``ObjectNameForBaseAndSuffix``). ``go_json_string``/``encode_permission`` write that encoding with the
  FBC engine's Go JSON encoder (``fbc.golang.json``).
- ``check_installable(bundle)``: what v1.5.1 refuses (dependencies, owned APIServices, webhooks, its bundle
  validators, install modes without AllNamespaces, manifests of unsupported kinds), as messages.
- ``installer_rbac(...)``: the ServiceAccount, one ClusterRole + ClusterRoleBinding and one Role + RoleBinding in
  the install namespace, for the union of several bundles (every version a request may install, so upgrades
  within the range keep working).

No Ansible or kubernetes imports: a bundle is a list of manifest dicts (the CSV plus the other files of its
``manifests/`` directory).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_marshal, go_quote
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.installmode import ALL_NAMESPACES, supported_modes

CSV_KIND = "ClusterServiceVersion"
CRD_KIND = "CustomResourceDefinition"
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
OLM_V1_GROUP = "olm.operatorframework.io"

# util.ObjectNameForBaseAndSuffix's limit for generated names.
GENERATED_NAME_MAX = 63
# Names of our own RBAC objects (DNS-1123 subdomain length).
NAME_MAX = 253
INSTALLER_SUFFIX = "-installer"

# Verbs Helm uses on one object, by name (get, patch, update, delete) and on the collection (create); list and
# watch are the content manager's, cluster-wide (operator-controller's own pre-authorizer asks the same).
OBJECT_VERBS = ("get", "update", "patch", "delete")
CREATE_VERBS = ("create",)
WATCH_VERBS = ("list", "watch")
# The rule v1.5.1 appends to each promoted permission in AllNamespaces mode (OLM v0 parity).
NAMESPACES_RULE = {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]}

# Kinds operator-registry v1.57.0 supports in a bundle (pkg/lib/bundle/supported_resources.go), by kind only, with
# the scope OLM assumes (it sets the install namespace on those it calls namespaced).
OLM_SUPPORTED_KINDS = {
    "ClusterServiceVersion": True,
    "CustomResourceDefinition": False,
    "ClusterRole": False,
    "ClusterRoleBinding": False,
    "Service": True,
    "ServiceAccount": True,
    "Role": True,
    "RoleBinding": True,
    "PrometheusRule": True,
    "ServiceMonitor": True,
    "Secret": True,
    "ConfigMap": True,
    "PodDisruptionBudget": True,
    "PriorityClass": False,
    "VerticalPodAutoscaler": False,
    "ConsoleYAMLSample": False,
    "ConsoleQuickStart": False,
    "ConsoleCLIDownload": False,
    "ConsoleLink": False,
    "ConsolePlugin": False,
    "NetworkPolicy": True,
}

# (group, kind) -> (resource, namespaced in the API). Everything v1.5.1 may create from a bundle: the supported
# kinds above plus the Deployments of the CSV. VerticalPodAutoscaler is namespaced although OLM treats it as
# cluster-scoped (it then lands in the namespace of the manifest or, without one, Helm's: the install namespace).
KNOWN_RESOURCES = {
    ("apps", "Deployment"): ("deployments", True),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    ("", "Secret"): ("secrets", True),
    ("", "ConfigMap"): ("configmaps", True),
    ("", "ServiceAccount"): ("serviceaccounts", True),
    ("", "Service"): ("services", True),
    (RBAC_GROUP, "ClusterRole"): ("clusterroles", False),
    (RBAC_GROUP, "ClusterRoleBinding"): ("clusterrolebindings", False),
    (RBAC_GROUP, "Role"): ("roles", True),
    (RBAC_GROUP, "RoleBinding"): ("rolebindings", True),
    ("monitoring.coreos.com", "PrometheusRule"): ("prometheusrules", True),
    ("monitoring.coreos.com", "ServiceMonitor"): ("servicemonitors", True),
    ("policy", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
    ("scheduling.k8s.io", "PriorityClass"): ("priorityclasses", False),
    ("autoscaling.k8s.io", "VerticalPodAutoscaler"): ("verticalpodautoscalers", True),
    ("console.openshift.io", "ConsoleYAMLSample"): ("consoleyamlsamples", False),
    ("console.openshift.io", "ConsoleQuickStart"): ("consolequickstarts", False),
    ("console.openshift.io", "ConsoleCLIDownload"): ("consoleclidownloads", False),
    ("console.openshift.io", "ConsoleLink"): ("consolelinks", False),
    ("console.openshift.io", "ConsolePlugin"): ("consoleplugins", False),
    ("networking.k8s.io", "NetworkPolicy"): ("networkpolicies", True),
}

# FBC properties that declare dependencies; v1.5.1's resolver refuses them (resolve.NoDependencyValidation).
DEPENDENCY_PROPERTIES = ("olm.package.required", "olm.gvk.required", "olm.constraint")

# Verbs in the order they are listed in our rules (others follow alphabetically).
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "bind", "escalate")
_RULE_LISTS = ("apiGroups", "resources", "resourceNames", "nonResourceURLs")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

GeneratedRBAC = namedtuple("GeneratedRBAC", ["kind", "namespace", "name", "service_account", "rules"])


class InstallerRBACError(KubeforgeError):
    """A bundle cannot be read, is one operator-controller would refuse, or needs RBAC we cannot derive."""


# --------------------------------------------------------------------------------------------- Go's json.Encoder

def _utf8_length(lead):
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def _go_runes(data):
    """``(char or None, raw bytes)`` for each rune of ``data`` as Go's ``utf8.DecodeRune`` reads it: an invalid or
    truncated sequence is one byte at a time (``None``), surrogates and overlong forms are invalid."""
    i = 0
    while i < len(data):
        byte = data[i]
        if byte < 0x80:
            yield chr(byte), data[i : i + 1]
            i += 1
            continue
        size = _utf8_length(byte)
        if size:
            try:
                char = data[i : i + size].decode("utf-8")
            except UnicodeDecodeError:
                char = None
            if char is not None and len(char) == 1:
                yield char, data[i : i + size]
                i += size
                continue
        yield None, data[i : i + 1]
        i += 1


def _utf8(text):
    # Lone surrogates cannot come from YAML or JSON input; encoded as such they are invalid UTF-8 for Go as well.
    return text.encode("utf-8", "surrogatepass")


# Python's str cannot hold invalid UTF-8 except as lone surrogates; Go sees each as 3 invalid bytes (surrogatepass)
# and its encoder writes one \ufffd escape per invalid byte.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def go_json_string(text):
    """``text`` as Go's ``json.Encoder`` writes a string (HTML escaping on, its default): ``<``, ``>``, ``&`` as
    ``\\u003c``..., control characters as ``\\b \\f \\n \\r \\t`` or ``\\u00XX``, U+2028/U+2029 escaped, invalid
    UTF-8 as ``\\ufffd``, everything else verbatim (non-ASCII unescaped). The FBC engine's encoder
    (``fbc.golang.json.go_marshal``) writes it; only the invalid UTF-8 of lone surrogates is replaced here."""
    return _SURROGATE_RE.sub(lambda m: "\\ufffd" * 3, go_marshal(text))


def _go_string_list(values):
    """A ``[]string``: ``null`` when nil, ``[]`` when empty."""
    if values is None:
        return "null"
    return "[" + ",".join(go_json_string(v) for v in values) + "]"


def _encode_rule(rule):
    # rbac/v1 PolicyRule: verbs (no omitempty), then apiGroups, resources, resourceNames, nonResourceURLs (omitempty).
    parts = ['"verbs":' + _go_string_list(rule["verbs"])]
    for field in _RULE_LISTS:
        if rule[field]:
            parts.append(go_json_string(field) + ":" + _go_string_list(rule[field]))
    return "{" + ",".join(parts) + "}"


def encode_permission(service_account, rules):
    """The bytes Go's ``json.NewEncoder(w).Encode`` writes for a ``v1alpha1.StrategyDeploymentPermissions``
    (``serviceAccountName``, then ``rules``, neither omitempty), trailing newline included. ``rules``: None (nil)
    or a list of normalized rules (``normalize_rule``)."""
    encoded_rules = "null" if rules is None else "[" + ",".join(_encode_rule(r) for r in rules) + "]"
    text = '{"serviceAccountName":' + go_json_string(service_account) + ',"rules":' + encoded_rules + "}\n"
    return _utf8(text)


def _base36(number):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    out = []
    while number:
        number, rest = divmod(number, 36)
        out.append(digits[rest])
    return "".join(reversed(out))


def deep_hash(encoded):
    """util.DeepHashObject on already encoded bytes: SHA-224, read as a big-endian integer, in base 36."""
    return _base36(int.from_bytes(hashlib.sha224(encoded).digest(), "big"))


def object_name_for_base_and_suffix(base, suffix, limit=GENERATED_NAME_MAX):
    """util.ObjectNameForBaseAndSuffix: ``<base>-<suffix>``, the base cut (in bytes) when base and suffix together
    are longer than ``limit``. Faithful to Go, including its quirks: at exactly ``limit`` nothing is cut (the name
    is then ``limit`` + 1 long), and a cut inside a multi-byte character leaves invalid UTF-8, which reaches the
    API server as U+FFFD per stray byte (Go's JSON encoding of the object)."""
    raw = _utf8(base)
    if len(raw) + len(suffix) > limit:
        raw = raw[: limit - len(suffix) - 1]
    return "".join("\ufffd" if char is None else char for char, _raw in _go_runes(raw)) + "-" + suffix


# --------------------------------------------------------------------------------------------- reading the CSV


def _where(path):
    return ".".join(str(p) for p in path)


def _string(value, path, default=""):
    if value is None:
        return default
    if not isinstance(value, str):
        raise InstallerRBACError(f"{_where(path)} must be a string, not {type(value).__name__}: {excerpt(value)!r}")
    return value


def _string_list(value, path):
    """None (nil) or a list of strings, as runtime.DefaultUnstructuredConverter decodes a ``[]string``."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise InstallerRBACError(f"{_where(path)} must be a list of strings, not {type(value).__name__}")
    return [_string(v, path + [i]) for i, v in enumerate(value)]


def normalize_rule(rule, path=("rule",)):
    """A PolicyRule dict with exactly the five fields Go keeps (None for absent/null lists); unknown keys are
    dropped as the converter drops them. Raises ``InstallerRBACError`` on values Go could not decode."""
    path = list(path)
    if rule is None:
        rule = {}
    if not isinstance(rule, dict):
        raise InstallerRBACError(f"{_where(path)} must be a mapping, not {type(rule).__name__}")
    out = {"verbs": _string_list(rule.get("verbs"), path + ["verbs"])}
    for field in _RULE_LISTS:
        out[field] = _string_list(rule.get(field), path + [field])
    return out


def install_spec(csv):
    """``spec.install.spec`` of a CSV (a dict, possibly empty)."""
    spec = (csv or {}).get("spec") or {}
    install = spec.get("install") or {}
    value = install.get("spec") if isinstance(install, dict) else None
    return value if isinstance(value, dict) else {}


def csv_permissions(csv, field):
    """``[(serviceAccountName, rules or None)]`` of ``permissions`` or ``clusterPermissions`` (raw service account
    names: ``""`` when absent; rules normalized)."""
    entries = install_spec(csv).get(field)
    if entries is None:
        return []
    path = ["spec", "install", "spec", field]
    if not isinstance(entries, list):
        raise InstallerRBACError(f"{_where(path)} must be a list")
    out = []
    for index, entry in enumerate(entries):
        here = path + [index]
        if entry is None:
            entry = {}
        if not isinstance(entry, dict):
            raise InstallerRBACError(f"{_where(here)} must be a mapping")
        service_account = _string(entry.get("serviceAccountName"), here + ["serviceAccountName"])
        raw_rules = entry.get("rules")
        if raw_rules is not None and not isinstance(raw_rules, list):
            raise InstallerRBACError(f"{_where(here + ['rules'])} must be a list")
        rules = None if raw_rules is None else [normalize_rule(r, here + ["rules", i]) for i, r in enumerate(raw_rules)]
        out.append((service_account, rules))
    return out


def service_account_or_default(name):
    """generators.saNameOrDefault: an empty name is the namespace's ``default`` ServiceAccount."""
    return name or "default"


def _csv_name(csv):
    name = ((csv or {}).get("metadata") or {}).get("name")
    return _string(name, ["metadata", "name"])


def _unique_name(base, service_account, rules):
    return object_name_for_base_and_suffix(base, deep_hash(encode_permission(service_account, rules)))


def generated_rbac_names(csv, target_namespaces=None):
    """The RBAC objects operator-controller v1.5.1 generates for ``csv``, in its order, as ``GeneratedRBAC(kind,
    namespace, name, service_account, rules)`` (``rules``: normalized, what the role grants).

    ``target_namespaces``: None or ``[""]`` is AllNamespaces mode (``permissions`` become ClusterRoles with the
    extra namespaces rule); otherwise one Role + RoleBinding per target namespace and permission, then the
    ClusterRoles of ``clusterPermissions``.
    """
    targets = [""] if target_namespaces is None else list(target_namespaces)
    all_namespaces = targets == [""]
    name = _csv_name(csv)
    permissions = csv_permissions(csv, "permissions")
    found = []
    if not all_namespaces:
        for namespace in targets:
            for service_account, rules in permissions:
                sa_name = service_account_or_default(service_account)
                role = _unique_name(f"{name}-{sa_name}", service_account, rules)
                found.append(GeneratedRBAC("Role", namespace, role, sa_name, rules or []))
                found.append(GeneratedRBAC("RoleBinding", namespace, role, sa_name, rules or []))
    cluster = list(csv_permissions(csv, "clusterPermissions"))
    if all_namespaces:
        cluster += [(sa, (rules or []) + [normalize_rule(NAMESPACES_RULE)]) for sa, rules in permissions]
    for service_account, rules in cluster:
        sa_name = service_account_or_default(service_account)
        role = _unique_name(f"{name}-{sa_name}", service_account, rules)
        found.append(GeneratedRBAC("ClusterRole", None, role, sa_name, rules or []))
        found.append(GeneratedRBAC("ClusterRoleBinding", None, role, sa_name, rules or []))
    return found


def generated_service_accounts(csv):
    """Names of the ServiceAccounts v1.5.1 creates: those of ``permissions`` and ``clusterPermissions``, except
    ``default`` (a Deployment's ServiceAccount that no permission names is not created), sorted."""
    names = {service_account_or_default(sa) for sa, _rules in csv_permissions(csv, "permissions") + csv_permissions(csv, "clusterPermissions")}
    names.discard("default")
    return sorted(names)


def csv_deployment_names(csv):
    """Names of ``spec.install.spec.deployments``, in order."""
    deployments = install_spec(csv).get("deployments") or []
    if not isinstance(deployments, list):
        raise InstallerRBACError("spec.install.spec.deployments must be a list")
    return [
        _string((d or {}).get("name") if isinstance(d, dict) else None, ["spec", "install", "spec", "deployments", i, "name"])
        for i, d in enumerate(deployments)
    ]


# --------------------------------------------------------------------------------------------- installability


def _kind(obj):
    return obj.get("kind") if isinstance(obj, dict) else None


def _name(obj):
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def bundle_csv(bundle):
    """The bundle's CSV (the last one, as v1.5.1's bundle reader keeps the last), or None."""
    found = None
    for obj in bundle or ():
        if _kind(obj) == CSV_KIND:
            found = obj
    return found


def _dns1123_subdomain_errors(value):
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MESSAGE)
    return sorted(errors)


def _duplicates(names):
    seen, duplicates = set(), set()
    for name in names:
        if name in seen:
            duplicates.add(name)
        seen.add(name)
    return sorted(duplicates)


def _validator_problems(csv, crd_names):
    """render/registryv1/validators of v1.5.1 that apply without webhooks, with their messages, in their order."""
    problems = []
    deployments = csv_deployment_names(csv)
    problems += [f"cluster service version contains duplicate strategy deployment spec '{d}'" for d in _duplicates(deployments)]
    for name in sorted(set(deployments)):
        errors = _dns1123_subdomain_errors(name)
        if errors:
            problems.append(f"invalid cluster service version strategy deployment name '{name}': {', '.join(errors)}")
    problems += [f"bundle contains duplicate custom resource definition '{c}'" for c in _duplicates(crd_names)]
    owned = (((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned")) or []
    owned_names = [str(o.get("name") or "") for o in owned if isinstance(o, dict)] if isinstance(owned, list) else []
    missing = sorted({n for n in owned_names if n not in crd_names})
    problems += [f"cluster service definition references owned custom resource definition '{m}' not found in bundle" for m in missing]
    return problems


def _install_mode_problem(csv):
    modes = supported_modes((csv.get("spec") or {}).get("installModes"))
    if ALL_NAMESPACES in modes:
        return None
    return (
        f"invalid target namespaces []: supported install modes [{' '.join(sorted(modes))}] do not support targeting all "
        "namespaces (operator-controller v1.5.1 installs registry+v1 bundles in AllNamespaces mode only; OwnNamespace and "
        "SingleNamespace need its alpha feature gate SingleOwnNamespaceInstallSupport and a watchNamespace in the "
        "ClusterExtension's configuration)"
    )


def check_installable(bundle, properties=None, name=None):
    """Why operator-controller v1.5.1 would refuse ``bundle`` (a list of manifest dicts), as a list of messages
    (empty: installable), in the order it finds them, with its wording.

    ``properties``: the bundle's FBC properties, if known: ``olm.package.required``, ``olm.gvk.required`` and
    ``olm.constraint`` fail resolution (only the first is reported, as upstream does). ``name``: the bundle's
    name for that message. Also refused: owned APIServices (``apiservicedefinitions.owned``), ``webhookdefinitions``
    (they need an alpha feature gate and a certificate provider), the bundle validators (duplicate or invalid
    Deployment names, duplicate CRDs, owned CRDs missing from the bundle), a CSV without the AllNamespaces install
    mode and manifests of kinds OLM does not support in a bundle.
    """
    problems = []
    for prop in properties or ():
        if isinstance(prop, dict) and prop.get("type") in DEPENDENCY_PROPERTIES:
            problems.append(f"bundle {go_quote(name or '')} has a dependency declared via property {go_quote(prop['type'])} which is currently not supported")
            break
    if not isinstance(bundle, list):
        return problems + ["a bundle must be a list of manifests"]
    for index, obj in enumerate(bundle):
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not obj.get("kind"):
            problems.append(f"manifest {index} of the bundle is not a Kubernetes object (no kind)")
        elif not isinstance(_name(obj), str) or not _name(obj):
            problems.append(f"manifest {index} of the bundle ({obj['kind']}) has no metadata.name")
    if problems:
        return problems
    csv = bundle_csv(bundle)
    if csv is None:
        return ['no ClusterServiceVersion found in "manifests"']
    spec = csv.get("spec") or {}
    if (spec.get("apiservicedefinitions") or {}).get("owned"):
        problems.append("unsupported bundle: apiServiceDefintions are not supported")
        return problems
    if spec.get("webhookdefinitions"):
        problems.append(
            "unsupported bundle: webhookDefinitions are not supported (operator-controller v1.5.1 needs an alpha feature gate, "
            "WebhookProviderCertManager or WebhookProviderOpenshiftServiceCA, for them)"
        )
        return problems
    try:
        crd_names = [_name(o) for o in bundle if _kind(o) == CRD_KIND]
        problems += _validator_problems(csv, crd_names)
        mode = _install_mode_problem(csv)
        if mode:
            problems.append(mode)
        # what the generators would fail on: the permissions Go cannot decode, then unsupported kinds
        generated_rbac_names(csv)
    except InstallerRBACError as exc:
        problems.append(f"invalid ClusterServiceVersion {excerpt(_name(csv))}: {exc}")
    for obj in bundle:
        if _kind(obj) in (CSV_KIND, CRD_KIND):
            continue
        if obj["kind"] not in OLM_SUPPORTED_KINDS:
            problems.append(f"bundle contains unsupported resource: Name: {_name(obj)}, Kind: {obj['kind']}")
    return problems


# --------------------------------------------------------------------------------------------- installer RBAC


def _group(api_version):
    return api_version.rsplit("/", 1)[0] if isinstance(api_version, str) and "/" in api_version else ""


def manifest_resource(obj, resource_for):
    """``(group, resource, namespaced)`` of a manifest: the table of known kinds, else ``resource_for``."""
    api_version, kind = obj.get("apiVersion"), obj["kind"]
    group = _group(api_version)
    if kind == CRD_KIND:  # v1.5.1 reads every CustomResourceDefinition as apiextensions.k8s.io/v1
        group = "apiextensions.k8s.io"
    known = KNOWN_RESOURCES.get((group, kind))
    if known is None and resource_for is not None:
        known = resource_for(api_version, kind)
    if known is None:
        raise InstallerRBACError(
            f"cannot tell the API resource of {kind} {_name(obj)!r} (apiVersion {api_version!r}): it is not one of the kinds "
            "OLM supports in a bundle under its usual API group; pass a resource mapping backed by discovery"
        )
    resource, namespaced = known
    return group, resource, bool(namespaced)


class _Grants:
    """Atomic permissions in two scopes: ``cluster`` (the ClusterRole) and ``namespace`` (the Role).

    Resource atoms are ``(group, resource, name or None, verb)``, non-resource atoms ``(url, verb)``.
    """

    def __init__(self):
        self.cluster = set()
        self.namespace = set()
        self.cluster_urls = set()

    def add(self, scope, group, resource, verbs, names=None):
        target = self.cluster if scope == "cluster" else self.namespace
        for verb in verbs:
            for name in names or (None,):
                target.add((group, resource, name, verb))

    def add_rule(self, scope, rule):
        """Every atom of a (normalized) PolicyRule, as the API server's escalation check breaks it down."""
        target = self.cluster if scope == "cluster" else self.namespace
        verbs = rule["verbs"] or ()
        for group in rule["apiGroups"] or ():
            for resource in rule["resources"] or ():
                for name in rule["resourceNames"] or (None,):
                    for verb in verbs:
                        target.add((group, resource, name, verb))
        if scope == "cluster":
            for url in rule["nonResourceURLs"] or ():
                for verb in verbs:
                    self.cluster_urls.add((url, verb))


def _verb_key(verb):
    return (_VERB_ORDER.index(verb), "") if verb in _VERB_ORDER else (len(_VERB_ORDER), verb)


def _sorted_verbs(verbs):
    return sorted(verbs, key=_verb_key)


def _regroup(items, key, value):
    """``{key(item): set(value(item))}``."""
    out = {}
    for item in items:
        out.setdefault(key(item), set()).add(value(item))
    return out


def _without_redundant(atoms, covering=frozenset()):
    """Drop named atoms that an unnamed atom of the same group/resource/verb (here or in ``covering``) grants."""
    unnamed = {(g, r, v) for g, r, n, v in atoms | covering if n is None}
    kept = {a for a in atoms if a[2] is None or (a[0], a[1], a[3]) not in unnamed}
    if covering:
        kept -= covering
    return kept


def _compact(atoms, urls=()):
    """Rules granting exactly ``atoms`` and ``urls``, merged (cross products only) and sorted deterministically."""
    rules = []
    unnamed = [(g, r, v) for g, r, n, v in atoms if n is None]
    by_resource = _regroup(unnamed, lambda a: (a[0], a[1]), lambda a: a[2])
    by_verbs = _regroup(by_resource.items(), lambda kv: (kv[0][0], frozenset(kv[1])), lambda kv: kv[0][1])
    by_resources = _regroup(by_verbs.items(), lambda kv: (kv[0][1], frozenset(kv[1])), lambda kv: kv[0][0])
    for (verbs, resources), groups in by_resources.items():
        rules.append({"apiGroups": sorted(groups), "resources": sorted(resources), "verbs": _sorted_verbs(verbs)})
    named = [a for a in atoms if a[2] is not None]
    names = _regroup(named, lambda a: (a[0], a[1], a[3]), lambda a: a[2])
    verbs_of = _regroup(names.items(), lambda kv: (kv[0][0], kv[0][1], frozenset(kv[1])), lambda kv: kv[0][2])
    resources_of = _regroup(verbs_of.items(), lambda kv: (kv[0][0], kv[0][2], frozenset(kv[1])), lambda kv: kv[0][1])
    groups_of = _regroup(resources_of.items(), lambda kv: (kv[0][1], kv[0][2], frozenset(kv[1])), lambda kv: kv[0][0])
    for (rnames, verbs, resources), groups in groups_of.items():
        rules.append({"apiGroups": sorted(groups), "resources": sorted(resources), "resourceNames": sorted(rnames), "verbs": _sorted_verbs(verbs)})
    url_verbs = _regroup(urls, lambda a: a[0], lambda a: a[1])
    for verbs, found in _regroup(url_verbs.items(), lambda kv: frozenset(kv[1]), lambda kv: kv[0]).items():
        rules.append({"nonResourceURLs": sorted(found), "verbs": _sorted_verbs(verbs)})

    def key(rule):
        return tuple(tuple(rule.get(f) or ()) for f in _RULE_LISTS) + (tuple(_verb_key(v) for v in rule["verbs"]),)

    return sorted(rules, key=key)


def installer_name(extension_name):
    """``<extension>-installer``, at most 253 characters (a long name is cut and made unique with a hash)."""
    name = extension_name + INSTALLER_SUFFIX
    if len(name) <= NAME_MAX:
        return name
    digest = hashlib.sha256(extension_name.encode("utf-8")).hexdigest()[:10]
    keep = extension_name[: NAME_MAX - len(INSTALLER_SUFFIX) - len(digest) - 1].rstrip("-.")
    return f"{keep}-{digest}{INSTALLER_SUFFIX}"


def _check_arguments(extension_name, namespace, service_account):
    for label, value, pattern, limit in (
        ("extension name", extension_name, DNS1123_SUBDOMAIN, 253),
        ("namespace", namespace, DNS1123_LABEL, 63),
        ("service account", service_account, DNS1123_SUBDOMAIN, 253),
    ):
        if not isinstance(value, str) or len(value) > limit or not pattern.fullmatch(value):
            raise InstallerRBACError(f"{label} {excerpt(value)!r} is not valid (lower-case alphanumerics, '-' and '.', at most {limit} characters)")


def _add_object(grants, scope, group, resource, name):
    """Helm's by-name verbs and create in ``scope``; the content manager's list/watch cluster-wide."""
    grants.add(scope, group, resource, OBJECT_VERBS, [name])
    grants.add(scope, group, resource, CREATE_VERBS)
    grants.add("cluster", group, resource, WATCH_VERBS)


def _bundle_grants(grants, bundle, namespace, resource_for):
    csv = bundle_csv(bundle)
    # Generated objects: ServiceAccounts, ClusterRoles + bindings (AllNamespaces), CRDs, the others, Deployments.
    for sa_name in generated_service_accounts(csv):
        _add_object(grants, "namespace", "", "serviceaccounts", sa_name)
    generated_roles = set()
    for item in generated_rbac_names(csv):
        if item.kind == "ClusterRole":
            generated_roles.add(item.name)
            _add_object(grants, "cluster", RBAC_GROUP, "clusterroles", item.name)
            for rule in item.rules:
                grants.add_rule("cluster", rule)
        else:
            _add_object(grants, "cluster", RBAC_GROUP, "clusterrolebindings", item.name)
    shipped = {(_kind(o), _name(o)) for o in bundle if _kind(o) in ("ClusterRole", "Role")}
    for obj in bundle:
        kind = _kind(obj)
        if kind == CSV_KIND:
            continue
        group, resource, namespaced = manifest_resource(obj, resource_for)
        if namespaced:
            object_namespace = namespace
            if not OLM_SUPPORTED_KINDS.get(kind, True):
                object_namespace = ((obj.get("metadata") or {}).get("namespace")) or namespace
            if object_namespace != namespace:
                raise InstallerRBACError(
                    f"{kind} {_name(obj)!r} of the bundle goes to namespace {object_namespace!r}, not the install namespace {namespace!r}: "
                    "its RBAC cannot be derived"
                )
            _add_object(grants, "namespace", group, resource, _name(obj))
        else:
            _add_object(grants, "cluster", group, resource, _name(obj))
        if group == RBAC_GROUP:
            _shipped_rbac(grants, obj, kind, shipped)
    for deployment in csv_deployment_names(csv):
        _add_object(grants, "namespace", "apps", "deployments", deployment)
    return generated_roles


def _shipped_rbac(grants, obj, kind, shipped):
    """Escalation prevention for RBAC objects shipped in the bundle: hold a role's rules to create it; to bind a
    role the bundle does not ship, ``bind`` on that role by name."""
    if kind in ("ClusterRole", "Role"):
        if kind == "ClusterRole" and obj.get("aggregationRule"):
            raise InstallerRBACError(
                f"ClusterRole {_name(obj)!r} of the bundle has an aggregationRule: creating it takes cluster-admin privileges "
                "(or escalate on every ClusterRole), which a least-privilege installer cannot have"
            )
        rules = obj.get("rules") or []
        if not isinstance(rules, list):
            raise InstallerRBACError(f"{kind} {_name(obj)!r}: rules must be a list")
        for index, rule in enumerate(rules):
            grants.add_rule("cluster" if kind == "ClusterRole" else "namespace", normalize_rule(rule, [kind, _name(obj), "rules", index]))
    elif kind in ("ClusterRoleBinding", "RoleBinding"):
        ref = obj.get("roleRef") or {}
        ref_kind, ref_name = ref.get("kind"), ref.get("name")
        if not isinstance(ref_name, str) or ref_kind not in ("ClusterRole", "Role"):
            raise InstallerRBACError(f"{kind} {_name(obj)!r} of the bundle has no valid roleRef")
        if (ref_kind, ref_name) not in shipped:
            scope = "cluster" if kind == "ClusterRoleBinding" else "namespace"
            grants.add(scope, RBAC_GROUP, "clusterroles" if ref_kind == "ClusterRole" else "roles", ("bind",), [ref_name])


def _meta(name, namespace=None, labels=None):
    meta = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    return meta


def installer_rbac(extension_name, namespace, service_account, bundles, resource_for=None, labels=None):
    """The least-privilege objects for a ClusterExtension's installer ServiceAccount, for the union of ``bundles``.

    ``bundles``: every bundle the request may install (each a list of manifest dicts: the CSV and the other files
    of ``manifests/``); include the installed bundle too, so Helm may delete its objects on an upgrade.
    ``resource_for(api_version, kind) -> (resource, namespaced)`` (or None) maps kinds outside the built-in table
    (the cluster glue backs it with discovery). ``labels``: put on every object.

    Returns ``[ServiceAccount, ClusterRole, ClusterRoleBinding, Role, RoleBinding]`` (the Roles in ``namespace``,
    all RBAC named ``installer_name(extension_name)``); the same input gives the same output. The ClusterRole holds
    ``update`` on the extension's ``clusterextensions/finalizers``, create/list/watch of every cluster-scoped type
    installed plus get/update/patch/delete of each object by name, list/watch of the namespaced types, and every
    rule of the generated and shipped ClusterRoles (so the ServiceAccount may grant them); the Role holds create and
    the by-name verbs of the namespaced objects and the rules of shipped Roles. Raises ``InstallerRBACError`` when a
    bundle is not installable (``check_installable``) or its RBAC cannot be derived.
    """
    _check_arguments(extension_name, namespace, service_account)
    if not bundles:
        raise InstallerRBACError("no bundle to derive the installer's permissions from")
    grants = _Grants()
    grants.add("cluster", OLM_V1_GROUP, "clusterextensions/finalizers", ("update",), [extension_name])
    for bundle in bundles:
        problems = check_installable(bundle)
        if problems:
            csv = bundle_csv(bundle) if isinstance(bundle, list) else None
            raise InstallerRBACError(f"bundle {excerpt(_name(csv) if csv else '?')} cannot be installed by OLM v1: " + "; ".join(problems))
        _bundle_grants(grants, bundle, namespace, resource_for)
    cluster = _without_redundant(grants.cluster)
    namespaced = _without_redundant(grants.namespace, covering=frozenset(cluster))
    name = installer_name(extension_name)
    subject = [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(service_account, namespace, labels)},
        {"apiVersion": RBAC_API_VERSION, "kind": "ClusterRole", "metadata": _meta(name, None, labels), "rules": _compact(cluster, grants.cluster_urls)},
        {
            "apiVersion": RBAC_API_VERSION,
            "kind": "ClusterRoleBinding",
            "metadata": _meta(name, None, labels),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
            "subjects": subject,
        },
        {"apiVersion": RBAC_API_VERSION, "kind": "Role", "metadata": _meta(name, namespace, labels), "rules": _compact(namespaced)},
        {
            "apiVersion": RBAC_API_VERSION,
            "kind": "RoleBinding",
            "metadata": _meta(name, namespace, labels),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": name},
            "subjects": subject,
        },
    ]


def broad_grants(objects):
    """Warnings about what the derived roles grant beyond single objects: wildcards (copied from a CSV or shipped
    role) and cluster-wide reads of Secrets (the content manager lists every type it installs cluster-wide)."""
    warnings = []
    for obj in objects:
        if obj.get("kind") not in ("ClusterRole", "Role"):
            continue
        for rule in obj.get("rules") or ():
            if any("*" in (rule.get(f) or ()) for f in ("verbs", "apiGroups", "resources", "nonResourceURLs")):
                warnings.append(f"{obj['kind']} {obj['metadata']['name']} grants a wildcard the bundle's CSV or roles grant: {rule}")
            if obj["kind"] == "ClusterRole" and "" in (rule.get("apiGroups") or ()) and "secrets" in (rule.get("resources") or ()):
                if not rule.get("resourceNames") and {"list", "watch", "get"} & set(rule.get("verbs") or ()):
                    warnings.append(f"ClusterRole {obj['metadata']['name']} lets the installer read Secrets in every namespace: {rule}")
    return warnings
