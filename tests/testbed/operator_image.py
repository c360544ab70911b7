"""The kubeforge-operator image, built in Python by the testbed: what operator/Dockerfile builds on the upstream
ansible-operator base image, made of parts this machine already has, with no container engine.

- ansible-operator: the binary the testbed builds (same version as the Dockerfile's base image).
- Python: Debian's python3.11 (/usr/bin/python3.11, its standard library without tests and GUI modules, the shared
  libraries ldd names for it and its extension modules) glibc's C.UTF-8 locale, /bin/sh (dash) and the
  coreutils Ansible's shell commands call - a root filesystem made from Debian packages.
- Python packages: ansible-core, ansible-runner, the ansible-runner-http event plugin and kubernetes with everything
  they require, copied file by file (by their installed-files records) from this repository's virtualenv into
  Debian's dist-packages directory. The pins are requirements-dev.txt's.
- Collections: this collection (its plugins, roles and metadata) and kubernetes.core from the virtualenv's `ansible`
  package, under $HOME/.ansible/collections; operator/watches.yaml as $HOME/watches.yaml.

The image runs `ansible-operator run` as any UID (HOME and /tmp are writable by all), as OpenShift's restricted-v2
SCC assigns one.
"""

import os
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

from testbed import realnode
from testbed.errors import TestbedError

PYTHON = Path("/usr/bin/python3.11")
STDLIB = Path("/usr/lib/python3.11")
# Not needed to run Ansible, and most of the standard library's size.
STDLIB_SKIPPED = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data", "__pycache__", "config-3.11-x86_64-linux-gnu"}
SITE_PACKAGES = "/usr/lib/python3/dist-packages"
# Ansible refuses to start without a UTF-8 locale; Debian's glibc reads C.UTF-8 from here (libc-bin).
LOCALE = Path("/usr/lib/locale/C.utf8")
SHELL = Path(os.path.realpath("/bin/sh"))
TOOLS = ("mkdir", "rm", "rmdir", "chmod", "sleep", "cat", "cp", "mv", "ls", "env", "id", "uname", "touch")
HOME = "/opt/ansible"
ROOTS = ("ansible-core", "ansible-runner", "ansible-runner-http", "kubernetes")
REPO_ROOT = Path(__file__).resolve().parents[2]
# What of this repository makes the collection (ansible-galaxy's build keeps the same).
COLLECTION_PARTS = ("galaxy.yml", "meta", "plugins", "roles")
SCRIPTS = {
    "ansible-runner": "from ansible_runner.__main__ import main",
    "ansible-playbook": "from ansible.cli.playbook import main",
    "ansible-galaxy": "from ansible.cli.galaxy import main",
    "ansible-config": "from ansible.cli.config import main",
}
REPOSITORY = "kubeforge-testbed/kubeforge-operator"


class OperatorImageError(TestbedError):
    """The image cannot be made from this machine's parts."""


def _requirement_name(requirement: str) -> str:
    return re.split(r"[ ;<>=!~\[(]", requirement.strip(), maxsplit=1)[0]


def distributions(roots=ROOTS) -> list:
    """The installed distributions ``roots`` need (their requirements without extras, transitively), sorted by name."""
    found, todo = {}, list(roots)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for other Python versions (importlib-metadata, async-timeout)
        found[key] = dist
        todo.extend(_requirement_name(r) for r in dist.requires or [] if "extra ==" not in r)
    return [found[k] for k in sorted(found)]


def _tree(source: Path, dest: str, skipped=frozenset()) -> dict:
    files = {}
    for directory, subdirs, names in os.walk(source):
        subdirs[:] = sorted(d for d in subdirs if d not in skipped)
        rel = Path(directory).relative_to(source)
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink() and not name.endswith(".pyc"):
                files[f"{dest}/{rel / name}".replace("/./", "/")] = (path, 0o755 if os.access(path, os.X_OK) else 0o644)
    return files


def _elf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def image_files(bins: Path, version: str, workdir: Path) -> dict:
    """Every file of the image: {path in the image: (host file or None for a directory, mode)}."""
    if not PYTHON.is_file() or not STDLIB.is_dir() or not LOCALE.is_dir():
        raise OperatorImageError(f"{PYTHON}, {STDLIB} (Debian's python3.11) and {LOCALE} are needed to build the operator image")
    files = {"/tmp": (None, 0o1777), HOME: (None, 0o777), f"{HOME}/.ansible": (None, 0o777), "/usr/local/bin/python3": (PYTHON, 0o755)}
    files[str(PYTHON)] = (PYTHON, 0o755)
    # Ansible runs every module through /bin/sh (Debian's dash) and the few coreutils its shell commands call.
    files["/bin/sh"] = (SHELL, 0o755)
    for tool in TOOLS:
        found = shutil.which(tool, path="/usr/bin:/bin")
        if not found:
            raise OperatorImageError(f"{tool} (coreutils) not found on this machine")
        files[f"/usr/bin/{tool}"] = (Path(os.path.realpath(found)), 0o755)
    files.update(_tree(STDLIB, str(STDLIB), STDLIB_SKIPPED))
    files.update(_tree(LOCALE, str(LOCALE)))
    for dist in distributions():
        for entry in dist.files or []:
            source = Path(dist.locate_file(entry))
            rel = str(entry)
            if rel.startswith("..") or "__pycache__" in rel or not source.is_file():
                continue  # console scripts in the virtualenv's bin (the image has its own), byte code
            files[f"{SITE_PACKAGES}/{rel}"] = (source, 0o755 if os.access(source, os.X_OK) else 0o644)
    collections = f"{HOME}/.ansible/collections/ansible_collections"
    core = Path(metadata.distribution("ansible").locate_file("ansible_collections/kubernetes/core"))
    files.update(_tree(core, f"{collections}/kubernetes/core", {"tests", "__pycache__"}))
    for part in COLLECTION_PARTS:
        source = REPO_ROOT / part
        if source.is_dir():
            files.update(_tree(source, f"{collections}/kubeforge/operators/{part}", {"__pycache__"}))
        else:
            files[f"{collections}/kubeforge/operators/{part}"] = (source, 0o644)
    files[f"{HOME}/watches.yaml"] = (REPO_ROOT / "operator" / "watches.yaml", 0o644)
    files["/usr/local/bin/ansible-operator"] = (bins / f"ansible-operator-{version}", 0o755)
    scripts = workdir / "scripts"
    scripts.mkdir(parents=True, exist_ok=True)
    for name, import_line in SCRIPTS.items():
        script = scripts / name
        script.write_text(f"#!{PYTHON}\nimport sys\n{import_line}\nsys.exit(main())\n")
        files[f"/usr/local/bin/{name}"] = (script, 0o755)
    # An /etc/passwd entry for the UID OpenShift picks is not there: USER and HOME (set in the image) stand in.
    passwd = workdir / "passwd"
    passwd.write_text(f"root:x:0:0:root:/root:/bin/sh\nansible:x:1001:0:ansible:{HOME}:/bin/sh\n")
    files["/etc/passwd"] = (passwd, 0o644)
    libraries = set()
    for path, (source, _mode) in list(files.items()):
        executable = source in (PYTHON, SHELL) or path.startswith("/usr/bin/")
        if source is not None and (str(source).endswith(".so") or ".so." in str(source) or executable) and _elf(source):
            libraries.update(realnode.shared_libraries(source))
    for library in sorted(libraries):
        files.setdefault(library, (Path(os.path.realpath(library)), 0o755))
    return files


def build_and_push(bins: Path, version: str, registry: dict, workdir: Path, repository: str = REPOSITORY, tag: str = None) -> str:
    """Build the image and push it to the testbed registry as ``repository:tag`` (the tag defaults to the
    ansible-operator version); returns its digest reference."""
    client, image = realnode.oci_modules()
    files = image_files(bins, version, workdir)
    # Ansible wants a UTF-8 locale; glibc has C.UTF-8 built in.
    env = {"HOME": HOME, "USER": "ansible", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "ANSIBLE_LOCAL_TEMP": "/tmp/ansible-local", "PYTHONDONTWRITEBYTECODE": "1"}
    built = realnode.build_image(files, ["/usr/local/bin/ansible-operator", "run", f"--watches-file={HOME}/watches.yaml"], None, env=env, workdir=HOME)
    ref = f"{registry['host']}/{repository}:{tag or version}"
    password = Path(registry["password_file"]).read_text().strip()
    image.push_image(client.client_for(ref, username=registry["username"], password=password, ca_file=registry["ca_file"]), ref, built)
    return f"{registry['host']}/{repository}@{built.digest}"


def check_python() -> None:
    """Fail early when Debian's python3.11 cannot import what the image runs (run by the test that builds it)."""
    result = subprocess.run([str(PYTHON), "-c", "import ssl, json, ctypes"], capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise OperatorImageError(f"{PYTHON} cannot import its own standard library: {result.stderr.strip()[:300]}")
