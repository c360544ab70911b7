"""The testbed's process control, on real (tiny) processes."""

import socket

from lib.polling import poll_until
from testbed import procs


def test_stop_kills_the_whole_process_group(tmp_path):
    # bash with a background child: stopping must take both down (the child is in the same session/group).
    record = procs.start("sleeper", ["bash", "-c", "sleep 300 & echo child=$!; wait"], tmp_path)

    def child_pid():
        lines = (tmp_path / "sleeper.log").read_text().splitlines()
        return next((int(line.split("=")[1]) for line in lines if line.startswith("child=")), None)

    child = poll_until(child_pid, 5, 0.05, "the child's pid in the log", until=lambda pid: pid is not None)
    assert child and procs.alive(child)
    assert procs.alive(record["pid"], record["binary"])
    assert sorted(procs.group_members(record["pid"])) == sorted([record["pid"], child])

    procs.stop(record, timeout=5)

    assert not procs.alive(record["pid"])
    assert not procs.alive(child)
    assert procs.group_members(record["pid"]) == []


def test_alive_rejects_a_recycled_pid_running_another_binary(tmp_path):
    record = procs.start("sleeper", ["sleep", "30"], tmp_path)
    try:
        assert procs.alive(record["pid"], "/usr/bin/sleep")
        assert not procs.alive(record["pid"], "/usr/bin/kube-apiserver")
    finally:
        procs.stop(record)


def test_free_port_is_free_and_port_open_sees_a_listener():
    port = procs.free_port()
    assert not procs.port_open(port)
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen(1)
        assert procs.port_open(port)


def test_free_ports_are_outside_the_ephemeral_range_and_distinct():
    """No outgoing connection can take such a port between its choice and the component's bind."""
    low, high = procs._ephemeral_range()
    ports = [procs.free_port() for _attempt in range(20)]
    assert len(set(ports)) == 20
    assert all(p < low or p > high for p in ports), (low, high, ports)


def test_start_records_the_command_line_in_the_log(tmp_path):
    record = procs.start("echoer", ["echo", "hello"], tmp_path, env={"X": "1"})
    poll_until(lambda: not procs.alive(record["pid"]), 5, 0.05, "echo to exit")
    text = (tmp_path / "echoer.log").read_text()
    assert "starting echo hello" in text
    assert "hello\n" in text
