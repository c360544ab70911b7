"""Start, track and stop the testbed's local processes (one log file and one pid record each)."""

import functools
import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

from lib.polling import PollTimeout, poll_until

# Ports free_port() tries first: below the kernel's ephemeral range, so that no outgoing connection can take one
# between the choice and the component's bind (a port the kernel picked from that range was taken twice by the time a
# late component - the registry, the SCC webhook - bound it).
EPHEMERAL_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
LOWEST_PORT = 10000
_handed_out: set = set()


def _ephemeral_range() -> tuple:
    try:
        with open(EPHEMERAL_RANGE_FILE) as handle:
            low, high = (int(x) for x in handle.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now, outside the ephemeral range when one is (not handed out before
    by this process); else one the kernel picks."""
    low, high = _ephemeral_range()
    candidates = [*range(LOWEST_PORT, low), *range(high + 1, 65536)]
    for port in random.sample(candidates, min(200, len(candidates))):
        if port not in _handed_out and _bindable(port):
            _handed_out.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def alive(pid: int, binary: Optional[str] = None) -> bool:
    """True when pid runs, and (if given) runs `binary` — guards against a recycled pid."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if binary:
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return False
        return os.path.basename(exe).split(" ")[0] == os.path.basename(binary)
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def start(name: str, argv: list[str], log_dir: Path, env: Optional[dict[str, str]] = None, unset: tuple = ()) -> dict:
    """Start argv detached from our session, stdout+stderr to <log_dir>/<name>.log; return its record."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / (name + ".log")
    full_env = dict(os.environ)
    full_env.update(env or {})
    for key in unset:
        full_env.pop(key, None)
    with open(log_path, "ab") as log:
        log.write(("\n==== {} starting {}\n".format(time.strftime("%H:%M:%S"), " ".join(argv))).encode())
        log.flush()
        proc = subprocess.Popen(  # noqa: S603 - argv is built by the testbed, never from user input
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=full_env, start_new_session=True, close_fds=True
        )
    # argv, env (the overrides only, never the inherited environment) and unset are kept so that restart() can
    # start the same process again.
    return {"name": name, "pid": proc.pid, "binary": argv[0], "log": str(log_path), "argv": list(argv), "env": dict(env or {}), "unset": list(unset)}


def launch_spec(record: dict) -> tuple[list[str], dict[str, str], tuple]:
    """(argv, env overrides, names to unset) that start a record's process again, for start().

    Records written before start() kept them are read from /proc of the running process: its command line, and its
    environment as the difference to ours (variables that differ, and ours it lacks to unset). That is refused for
    a process in another mount namespace: it was started through a wrapper that exec'd it (packageserver's
    unshare), which /proc no longer shows.
    """
    if record.get("argv"):
        return list(record["argv"]), dict(record.get("env") or {}), tuple(record.get("unset") or ())
    pid = record["pid"]
    if not alive(pid, record.get("binary")):
        raise RuntimeError(f"{record['name']} (pid {pid}) is not running and its record has no argv to start it again")
    if os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt"):
        raise RuntimeError(f"{record['name']} runs in its own mount namespace (started through a wrapper): its record needs an argv")
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        argv = [arg.decode() for arg in handle.read().split(b"\0")[:-1]]
    with open(f"/proc/{pid}/environ", "rb") as handle:
        env = dict(item.decode().split("=", 1) for item in handle.read().split(b"\0") if b"=" in item)
    return argv, {k: v for k, v in env.items() if os.environ.get(k) != v}, tuple(key for key in os.environ if key not in env)


def stop(record: dict, timeout: float = 15.0) -> None:
    """SIGTERM the process group of a record, then SIGKILL what is left after `timeout`; returns once no process of
    the group runs any more."""
    pid = record["pid"]
    if not alive(pid, record.get("binary")):
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        try:
            poll_until(functools.partial(_group_gone, pid), wait, interval=0.1, describe=f"process group {pid} to exit")
            return
        except PollTimeout:
            continue  # the next signal


def group_members(pgid: int) -> list[int]:
    """The pids of process group `pgid` that still run (zombies left out): a child may outlive its leader briefly."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def tail(path: str, lines: int = 30) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16384))
            data = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def _group_gone(pid: int) -> bool:
    try:
        # Reap it if it is our child (make testbed-down runs in another process: then it is not).
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return not alive(pid) and not group_members(pid)


def wait_exec(pid: int, binary: str, timeout: float) -> bool:
    """Wait until pid runs `binary` (a wrapper such as unshare has exec'd it); False when it exited first."""

    def state() -> Optional[str]:
        if alive(pid, binary):
            return "running"
        return None if alive(pid) else "exited"

    try:
        return poll_until(state, timeout, interval=0.05, describe=f"pid {pid} to run {binary}", until=lambda s: s is not None) == "running"
    except PollTimeout:
        return False
