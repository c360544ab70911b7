"""The testbed's process control, on real (tiny) processes."""

import socket
import time

from testbed import procs


def test_stop_kills_the_whole_process_group(tmp_path):
    # bash with a background child: stopping must take both down (the child is in the same session/group).
    record = procs.start("sleeper", ["bash", "-c", "sleep 300 & echo child=$!; wait"], tmp_path)
    deadline = time.monotonic() + 5
    child = None
    while time.monotonic() < deadline and child is None:
        for line in (tmp_path / "sleeper.log").read_text().splitlines():
            if line.startswith("child="):
                child = int(line.split("=")[1])
        time.sleep(0.05)
    assert child and procs.alive(child)
    assert procs.alive(record["pid"], record["binary"])

    procs.stop(record, timeout=5)

    assert not procs.alive(record["pid"])
    assert not procs.alive(child)


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


def test_start_records_the_command_line_in_the_log(tmp_path):
    record = procs.start("echoer", ["echo", "hello"], tmp_path, env={"X": "1"})
    deadline = time.monotonic() + 5
    while procs.alive(record["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    text = (tmp_path / "echoer.log").read_text()
    assert "starting echo hello" in text
    assert "hello\n" in text
