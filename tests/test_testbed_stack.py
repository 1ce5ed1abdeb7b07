"""The kernel TCP switches of a testbed run (to measure what each missing kernel behaviour
moves): parsing and what each switch asks of the network. No root needed."""
from __future__ import annotations

import pytest

from vegaslab.testbed import Stack, TestbedError


def test_the_default_stack_is_linuxs_own_and_changes_nothing():
    s = Stack.parse([])
    assert s == Stack() and s.sack and s.delayed_ack
    assert s.endpoint_sysctls() == {} and s.changes() == []


def test_sack_off_sets_the_per_namespace_sysctl_and_is_listed_as_a_change():
    s = Stack.parse(["sack=off", "delayed_ack=on"])
    assert s.endpoint_sysctls() == {"net.ipv4.tcp_sack": "0"}
    assert s.changes() == ["sack=off"]


def test_delayed_ack_off_needs_no_sysctl():
    s = Stack.parse(["delayed_ack=off"])
    assert not s.delayed_ack and s.endpoint_sysctls() == {} and s.changes() == ["delayed_ack=off"]


@pytest.mark.parametrize("item, words", [
    ("sack", ["NAME=on|off", "sack, delayed_ack"]),
    ("pacing=off", ["NAME=on|off", "sack, delayed_ack"]),
    ("sack=no", ["sack", "on or off", "'no'"]),
])
def test_a_bad_switch_gets_an_error_naming_it_and_the_allowed_values(item, words):
    with pytest.raises(TestbedError) as e:
        Stack.parse([item])
    assert all(w in str(e.value) for w in words), str(e.value)


def test_the_cli_rejects_a_bad_switch_with_one_line_and_exit_1(capsys):
    from vegaslab.cli import main

    assert main(["testbed", "run", "examples/kernel/a-one-vegas.toml", "--stack", "sack=maybe"]) == 1
    err = capsys.readouterr().err
    assert "on or off" in err and "Traceback" not in err
