"""Check the documentation site that `make docs` built, in a real browser: Debian's chromium, headless.

    python tests/docs/check_site.py .build/docs/html [--module-page PATH --option NAME]

- chromium loads the index page and a module page from file:// URLs (no network: every host name resolves to
  nothing) and the DOM it built is checked: each page has its title and heading; the index links to the guides and to
  the collection's reference; the module page has antsibull-docs' options table (a table of class
  ``ansible-option-table``) with a row for the option;
- every relative href and src of every built page (of the DOM chromium built, for the two pages it loaded) resolves:
  the file exists and, with a #fragment, the id exists in it.

Exits with status 1 and the list of problems when anything fails.
"""

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

# The index must link to these pages (the guides the issue asks for, and the collection's module/role index).
INDEX_LINKS = (
    "getting_started.html",
    "olm_install.html",
    "scc.html",
    "canary.html",
    "catalog_publishing.html",
    "operator.html",
    "awx.html",
    "collections/kubeforge/operators/index.html",
)
# An open element while parsing: its text is captured under the name `capture` (or not at all, None).
Element = collections.namedtuple("Element", "tag capture classes id")
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """What the checks need of one HTML document: title, first h1, ids, links, and the names in the options table of
    its Parameters section (antsibull-docs: <section id="parameters"> <table class="... ansible-option-table ...">,
    a <p class="ansible-option-title"> per option)."""

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.title = self.h1 = None
        self.ids, self.links, self.options = set(), [], []
        self._open = []  # the open Elements, outermost first
        self._text = {}
        self.feed(html)
        self.close()

    def _inside(self, tag, class_=None, id_=None):
        return any(e.tag == tag and (class_ is None or class_ in e.classes) and (id_ is None or e.id == id_) for e in self._open)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        for name in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(name):
                self.ids.add(attrs[name])
        self.links += [attrs[name] for name in ("href", "src") if attrs.get(name) is not None]
        if tag in VOID_ELEMENTS:
            return
        capture = None
        if tag == "title" or (tag == "h1" and self.h1 is None):
            capture = tag
        elif "ansible-option-title" in classes and self._inside("section", id_="parameters") and self._inside("table", "ansible-option-table"):
            capture = "option"
        self._open.append(Element(tag, capture, classes, attrs.get("id")))
        if capture:
            self._text[capture] = []

    def handle_data(self, data):
        if self._inside("a", "headerlink"):
            return  # the permalink sign after a heading
        for element in self._open:
            if element.capture:
                self._text[element.capture].append(data)

    def handle_endtag(self, tag):
        while self._open:
            element = self._open.pop()
            if element.capture:
                text = " ".join("".join(self._text.pop(element.capture)).split())
                if element.capture == "option":
                    self.options.append(text)
                elif getattr(self, element.capture) is None:
                    setattr(self, element.capture, text)
            if element.tag == tag:
                break


def chromium_dom(chromium, page):
    """The DOM chromium built for a local page, serialized (--dump-dom)."""
    with tempfile.TemporaryDirectory() as profile:
        # --no-sandbox: chromium's sandbox refuses to run as root (CI runs as root); the pages are our own files.
        options = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={profile}"]
        options += ["--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom", page.as_uri()]
        run = subprocess.run([chromium, *options], capture_output=True, text=True, timeout=120, check=False)
    if run.returncode != 0 or "<html" not in run.stdout:
        sys.exit(f"chromium could not load {page} (exit status {run.returncode}):\n{run.stderr[-3000:]}")
    return run.stdout


def check_links(site, pages):
    """Every relative href/src of every page points at an existing file, and its #fragment at an id of that page."""
    problems, checked = [], 0
    for path, page in sorted(pages.items()):
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not (parts.path or parts.fragment):
                continue  # absolute (another site, mailto:, data:, javascript:) or just "#"
            checked += 1
            target = Path(unquote(urlsplit(urljoin(path.as_uri(), link)).path))
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {link}"
            if not target.is_file():
                problems.append(f"{where}: no such file")
            elif parts.fragment and target in pages and unquote(parts.fragment) not in pages[target].ids:
                problems.append(f"{where}: no id {unquote(parts.fragment)!r} in {target.relative_to(site)}")
    return problems, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("site", type=Path, help="the built HTML directory (.build/docs/html)")
    parser.add_argument("--module-page", default="collections/kubeforge/operators/olm_operator_module.html")
    parser.add_argument("--option", default="package", help="an option the module page's options table must list")
    args = parser.parse_args()
    site = args.site.resolve()
    index, module = site / "index.html", site / args.module_page
    for page in (index, module):
        if not page.is_file():
            sys.exit(f"docs site check: {page} was not built")
    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("docs site check: chromium not found (Debian: apt-get install chromium; `make docs` installs it)")

    with ThreadPoolExecutor(2) as pool:
        index_dom, module_dom = pool.map(lambda page: Page(chromium_dom(chromium, page)), (index, module))
    problems = []

    expected = "kubeforge.operators documentation"
    if expected not in (index_dom.title or "") or index_dom.h1 != expected:
        problems.append(f"index.html: title {index_dom.title!r} / heading {index_dom.h1!r}, expected {expected!r}")
    index_targets = {urljoin(index.as_uri(), link).partition("#")[0] for link in index_dom.links}
    for link in INDEX_LINKS:
        if (site / link).as_uri() not in index_targets:
            problems.append(f"index.html: no link to {link}")

    name = Path(args.module_page).name.removesuffix("_module.html")
    expected = f"kubeforge.operators.{name} module"
    if expected not in (module_dom.title or "") or not (module_dom.h1 or "").startswith(expected):
        problems.append(f"{args.module_page}: title {module_dom.title!r} / heading {module_dom.h1!r}, expected {expected!r}")
    if not module_dom.options:
        problems.append(f"{args.module_page}: no options table in its Parameters section (table.ansible-option-table, p.ansible-option-title)")
    elif args.option not in module_dom.options:
        problems.append(f"{args.module_page}: the options table has no row for {args.option!r} (it lists {', '.join(module_dom.options)})")

    pages = {path: Page(path.read_text(encoding="utf-8")) for path in site.rglob("*.html")}
    pages.update({index: index_dom, module: module_dom})
    link_problems, links = check_links(site, pages)
    problems += link_problems

    if problems:
        problems = list(dict.fromkeys(problems))  # a page may have the same link twice (navigation and body)
        print(f"docs site check: {len(problems)} problem(s) in {site}:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    print(
        f"docs site check: OK - {len(pages)} pages, {links} links resolved; chromium loaded index.html and "
        f"{args.module_page} ({len(module_dom.options)} option rows, {args.option!r} among them)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
