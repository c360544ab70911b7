# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# Options for talking to OCI registries (Registry HTTP API v2). Their argument spec is
# plugins/module_utils/oci/args.py: registry_argspec(); keep this fragment in sync with REGISTRY_OPTION_NAMES there.
# Which registries the explicit credentials apply to is module specific and documented in each module's notes.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  registry_username:
    description:
      - B(Registry access.) Username for the registry. Without it, credentials come from O(docker_config).
      - Which registries it is used for depends on the module, see its notes.
    type: str
    version_added: 0.1.0
  registry_password:
    description:
      - B(Registry access.) Password or token for O(registry_username). It is never logged or returned.
    type: str
    version_added: 0.1.0
  docker_config:
    description:
      - B(Registry access.) Path of a docker C(config.json) giving registry credentials, read like the docker CLI reads it. A
        C(credHelpers) entry for the registry, or else C(credsStore), names a credential helper
        (C(docker-credential-<name>) on E(PATH)) that is asked first (a helper that is not installed is skipped);
        C(auths) entries (base64 C(auth) or C(username)/C(password)) answer otherwise. An identity token
        (C(identitytoken), or a helper's C(<token>) user) is exchanged at the registry's token server as an OAuth2
        refresh token; a registry with Basic authentication needs a username and password.
      - Without it, the files podman and skopeo read are tried in their order (containers-auth.json(5)), the
        first with credentials for the registry winning - E(REGISTRY_AUTH_FILE),
        C($XDG_RUNTIME_DIR/containers/auth.json), C(${XDG_CONFIG_HOME:-~/.config}/containers/auth.json) - then
        C($DOCKER_CONFIG/config.json) or C(~/.docker/config.json). Files that do not exist are skipped.
    type: path
    version_added: 0.1.0
  ca_file:
    description:
      - B(Registry access.) PEM CA bundle used to verify the registries' TLS certificates, in addition to the system trust store.
    type: path
    version_added: 0.1.0
  validate_certs:
    description:
      - B(Registry access.) Verify TLS certificates of the registries. Set to V(false) only for test registries.
    type: bool
    default: true
    version_added: 0.1.0
  plain_http:
    description:
      - B(Registry access.) Talk plain HTTP instead of HTTPS to the registries. Meant for loopback test registries; Basic credentials
        are never sent over plain HTTP to a non-loopback host.
    type: bool
    default: false
    version_added: 0.1.0
  timeout:
    description:
      - B(Registry access.) Timeout in seconds of each registry request.
    type: int
    default: 60
    version_added: 0.1.0
notes:
  - The options whose description starts with B(Registry access.) say how to reach the image registries;
    C(ansible-doc) sorts them among the module's own options.
  - Images are pulled through the registry mirrors podman, skopeo and CRI-O use - containers-registries.conf(5)
    version 2, from E(CONTAINERS_REGISTRIES_CONF), else C(~/.config/containers/registries.conf), else
    C(/etc/containers/registries.conf), with the C(registries.conf.d) drop-ins beside it (what OpenShift writes on
    its nodes for an ImageDigestMirrorSet). Each applicable mirror is tried in order, then the registry itself
    unless it is blocked; a mirror on another registry gets its credentials from the auth files, and C(ca_file) and
    C(validate_certs) apply to it too (C(insecure = true) turns its TLS verification off).
"""

    # One option holding the registry access (a module that also talks to a cluster keeps it apart from the cluster's
    # auth options); which registries, and when, is in each module's notes.
    DICT_OPTION = r"""
options:
  registry_auth:
    description:
      - B(Registry access.) How the module reads the images it needs; which registries, and when, the module's notes say.
    type: dict
    suboptions:
      username:
        description:
          - Username for the registries the module's notes name. Other registries get credentials from
            O(registry_auth.docker_config) only.
        type: str
      password:
        description:
          - Password or token for O(registry_auth.username); never logged or returned.
        type: str
      docker_config:
        description:
          - Path of a docker C(config.json) with registry credentials, read like the docker CLI reads it.
        type: path
      ca_file:
        description:
          - PEM CA bundle to verify the registries' certificates, on top of the system trust store.
        type: path
      validate_certs:
        description:
          - Verify the registries' TLS certificates.
        type: bool
        default: true
      plain_http:
        description:
          - Plain HTTP to loopback test registries.
        type: bool
        default: false
      timeout:
        description:
          - Timeout in seconds of each registry request.
        type: int
        default: 60
"""
