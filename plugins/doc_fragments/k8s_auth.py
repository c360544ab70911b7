# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# Options for authenticating with the Kubernetes API. They are kubernetes.core's auth options
# (plugins/module_utils/k8s/args.py: auth_argspec()); keep this fragment in sync with AUTH_OPTION_NAMES there.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  host:
    description:
      - B(Connection.) URL of the Kubernetes API server.
      - Can also be set with the E(K8S_AUTH_HOST) environment variable.
    type: str
  api_key:
    description:
      - B(Connection.) Bearer token used to authenticate with the API.
      - Can also be set with the E(K8S_AUTH_API_KEY) environment variable.
    type: str
  kubeconfig:
    description:
      - B(Connection.) Path to an existing Kubernetes config file. If it is not given and no other connection options are set, the
        in-cluster service account is tried first, then the default kubeconfig (E(KUBECONFIG) or C(~/.kube/config)).
      - Can also be set with the E(K8S_AUTH_KUBECONFIG) environment variable (for example by the ansible-operator
        runtime or an AWX kubeconfig credential).
      - Several files can be given separated by V(:) (V(;) on Windows).
      - The configuration can also be given as a dictionary (in-memory kubeconfig). Its secrets are never logged.
    type: raw
  context:
    description:
      - B(Connection.) Name of a context in the kubeconfig file.
      - Can also be set with the E(K8S_AUTH_CONTEXT) environment variable.
    type: str
  username:
    description:
      - B(Connection.) Username for HTTP basic authentication with the API.
      - Can also be set with the E(K8S_AUTH_USERNAME) environment variable.
      - Only works with clusters configured for HTTP basic auth; OpenShift OAuth needs a token (O(api_key)) instead.
    type: str
  password:
    description:
      - B(Connection.) Password for HTTP basic authentication with the API. See O(username).
      - Can also be set with the E(K8S_AUTH_PASSWORD) environment variable.
    type: str
  client_cert:
    description:
      - B(Connection.) Path to a client certificate used to authenticate with the API.
      - Can also be set with the E(K8S_AUTH_CERT_FILE) environment variable.
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - B(Connection.) Path to the key of O(client_cert).
      - Can also be set with the E(K8S_AUTH_KEY_FILE) environment variable.
    type: path
    aliases: [key_file]
  ca_cert:
    description:
      - B(Connection.) Path to a CA certificate used to verify the API server. The full certificate chain must be provided to avoid
        certificate validation errors.
      - Can also be set with the E(K8S_AUTH_SSL_CA_CERT) environment variable.
    type: path
    aliases: [ssl_ca_cert]
  validate_certs:
    description:
      - B(Connection.) Whether to verify the API server's TLS certificate.
      - Can also be set with the E(K8S_AUTH_VERIFY_SSL) environment variable.
    type: bool
    aliases: [verify_ssl]
  proxy:
    description:
      - B(Connection.) URL of an HTTP proxy to use for the connection.
      - Can also be set with the E(K8S_AUTH_PROXY) environment variable.
      - The usual E(HTTP_PROXY) and E(HTTPS_PROXY) environment variables and the kubeconfig C(proxy-url) field are
        B(not) used.
    type: str
  no_proxy:
    description:
      - B(Connection.) Comma-separated list of hosts, domains, IP addresses or CIDRs that must not go through O(proxy), for example
        V(localhost,127.0.0.1,.svc).
      - Can also be set with the E(K8S_AUTH_NO_PROXY) environment variable. E(NO_PROXY) is not used.
      - Requires the kubernetes Python library 19.15.0 or later.
    type: str
  proxy_headers:
    description:
      - B(Connection.) Headers sent to the HTTP proxy.
    type: dict
    suboptions:
      proxy_basic_auth:
        description:
          - Colon-separated C(username:password) for the proxy basic authentication header.
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_PROXY_BASIC_AUTH) environment variable.
        type: str
      basic_auth:
        description:
          - Colon-separated C(username:password) for the basic authentication header.
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_BASIC_AUTH) environment variable.
        type: str
      user_agent:
        description:
          - User agent sent to the proxy, for example V(foo/1.0).
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_USER_AGENT) environment variable.
        type: str
  persist_config:
    description:
      - B(Connection.) Whether to save refreshed tokens (for example OIDC refresh tokens) back to the kubeconfig file.
      - Can also be set with the E(K8S_AUTH_PERSIST_CONFIG) environment variable.
      - When not set, refreshed tokens are not saved.
    type: bool
  impersonate_user:
    description:
      - B(Connection.) User to impersonate for the operation (C(Impersonate-User) header).
      - Can also be set with the E(K8S_AUTH_IMPERSONATE_USER) environment variable.
    type: str
  impersonate_groups:
    description:
      - B(Connection.) Groups to impersonate for the operation (C(Impersonate-Group) headers).
      - Can also be set with the E(K8S_AUTH_IMPERSONATE_GROUPS) environment variable as a comma-separated list,
        for example V(group1,group2).
    type: list
    elements: str
notes:
  - The options whose description starts with B(Connection.) say how to reach the cluster; C(ansible-doc) sorts them
    among the module's own options. Most plays set them once, with C(module_defaults) for
    C(group/kubeforge.operators.operators) (which also covers kubernetes.core's k8s modules), or through the
    E(K8S_AUTH_*) environment variables.
  - These are the authentication options of M(kubernetes.core.k8s), with the same environment variables and the same
    resolution order; a play that works with kubernetes.core modules works with these modules.
  - When neither O(host) with credentials, nor O(kubeconfig), nor O(context) is set, the in-cluster service account is
    tried first, then the default kubeconfig.
  - To avoid TLS validation errors when O(validate_certs=true), provide the full certificate chain of the API server
    with O(ca_cert) or in the kubeconfig.
  - Use O(kubeconfig) values from Ansible Vault or a credential store; secrets (O(api_key), O(password), an in-memory
    O(kubeconfig)) are never logged.
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
  - PyYAML >= 3.11
"""
