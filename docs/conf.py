"""Sphinx configuration of the documentation site, built by `make docs`.

`make docs` assembles the source directory under .build/docs/src: the Markdown pages of this directory (copied as
they are) and the module, filter and role pages that antsibull-docs generates from the collection into
collections/. Nothing generated is kept in git. The build reaches no network: no intersphinx, no link check.

The Markdown pages link to repository files with paths relative to docs/, which resolve on GitHub. In the site a
source-read hook turns links to a module, filter or role documentation source into links to its generated page, and
every other link that leaves docs/ into a link to the file on GitHub. References of the generated pages to Ansible's
own documentation (kubernetes.core.k8s, common return values, ...) point at docs.ansible.com, as intersphinx would.
"""

import posixpath
import re

from docutils import nodes

REPOSITORY = "https://github.com/kubeforge/operators"
BRANCH = "main"
COLLECTION_PAGES = "collections/kubeforge/operators"
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/latest"

project = "kubeforge.operators"
author = "kubeforge maintainers"
project_copyright = "kubeforge maintainers, GNU General Public License v3.0 or later"

extensions = ["myst_parser", "sphinx_antsibull_ext"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = []

# Cross-references must all resolve (sphinx-build -n -W).
nitpicky = True
default_role = "any"
pygments_style = "ansible"
highlight_language = "YAML+Jinja"

# `[text](page.md#a-heading)` links between the guides.
myst_heading_anchors = 3

html_theme = "sphinx_ansible_theme"
html_title = "kubeforge.operators"
html_short_title = "kubeforge.operators"
html_show_sphinx = False
html_copy_source = False
html_use_index = False
html_use_modindex = False
html_theme_options = {
    "display_version": False,
    "documentation_home_url": "index.html",
    "show_extranav": False,
    "show_rtd_ethical_ads": False,
    "topbar_links": {"Repository": REPOSITORY, "Issues": f"{REPOSITORY}/issues", "Ansible documentation": "https://docs.ansible.com/"},
}
html_context = {
    "display_github": True,
    "github_user": "kubeforge",
    "github_repo": "operators",
    "github_version": f"{BRANCH}/docs/",
}

# Markdown inline links `[text](target)` and reference definitions `[label]: target`.
_LINK = re.compile(r"(?P<head>\]\(|^\[[^\]]+\]:[ \t]*)(?P<target>[^)\s]+)", re.MULTILINE)
# Repository files whose documentation is a generated page: plugins/modules/x.py, plugins/filter/x.{py,yml},
# plugins/inventory/x.py, roles/x/meta/argument_specs.yml.
_PLUGIN_PAGES = (
    (re.compile(r"^plugins/modules/(\w+)\.py$"), "{}_module"),
    (re.compile(r"^plugins/filter/(\w+)\.(?:py|yml)$"), "{}_filter"),
    (re.compile(r"^plugins/inventory/(\w+)\.py$"), "{}_inventory"),
    (re.compile(r"^roles/(\w+)/meta/argument_specs\.yml$"), "{}_role"),
)


def _site_link(match):
    target = match.group("target")
    if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target):
        return match.group(0)
    path, hash_sign, fragment = target.partition("#")
    resolved = posixpath.normpath(posixpath.join("docs", path))
    if resolved.startswith("docs/") and resolved.endswith(".md"):
        return match.group(0)  # another page of the site
    for pattern, page in _PLUGIN_PAGES:
        found = pattern.match(resolved)
        if found:
            return match.group("head") + f"{COLLECTION_PAGES}/{page.format(found.group(1))}.rst"
    return match.group("head") + f"{REPOSITORY}/blob/{BRANCH}/{resolved}{hash_sign}{fragment}"


def _rewrite_links(app, docname, source):
    if app.env.doc2path(docname).suffix == ".md":
        source[0] = _LINK.sub(_site_link, source[0])


# Labels of docs.ansible.com that the generated pages refer to: (path, title when the reference has none).
_ANSIBLE_LABELS = {
    "common_return_values": ("reference_appendices/common_return_values.html", "Return Values"),
    "ansible_configuration_settings": ("reference_appendices/config.html", "Ansible Configuration Settings"),
}
_OTHER_COLLECTION = re.compile(r"^ansible_collections\.(\w+)\.(\w+)\.(\w+_(?:module|lookup|filter|test|role|inventory))$")


def _ansible_docs_reference(app, env, node, contnode):
    """Resolve references to docs.ansible.com (Ansible's docs and other collections) to absolute links."""
    if node.get("reftype") == "envvar":
        # an environment variable of ansible-core's own settings (the inventory_cache doc fragment's
        # ANSIBLE_CACHE_PLUGIN, ...): the collection's environment_variables page lists only the others
        reference = nodes.reference("", "", internal=False, refuri=f"{ANSIBLE_DOCS}/reference_appendices/config.html#envvar-{node['reftarget']}")
        reference += contnode
        return reference
    if node.get("reftype") != "ref":
        return None
    target = node["reftarget"]
    found = _OTHER_COLLECTION.match(target)
    if found and found.group(1, 2) != ("kubeforge", "operators"):
        path, title = "collections/{}/{}/{}.html".format(*found.group(1, 2, 3)), None
    elif target in _ANSIBLE_LABELS:
        path, title = _ANSIBLE_LABELS[target]
    else:
        return None  # left to Sphinx, which reports it
    reference = nodes.reference("", "", internal=False, refuri=f"{ANSIBLE_DOCS}/{path}")
    reference += contnode if node.get("refexplicit") or title is None else nodes.inline(title, title)
    return reference


def _edit_on_github(app, pagename, templatename, context, doctree):
    """Only the pages kept in docs/ have a source to edit; the generated ones come from the plugins and roles."""
    if pagename.startswith("collections/"):
        context["display_github"] = False


def setup(app):
    app.connect("source-read", _rewrite_links)
    app.connect("html-page-context", _edit_on_github)
    app.connect("missing-reference", _ansible_docs_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
