"""What the testbed records about the parameters a kernel congestion control runs with, read
without root: a built-in one's module parameters as sysfs shows them."""

from __future__ import annotations

from vegaslab import kernel


def test_a_built_in_congestion_controls_parameters_are_read_from_sysfs_as_numbers(tmp_path, monkeypatch):
    folder = tmp_path / "tcp_cubic" / "parameters"
    folder.mkdir(parents=True)
    for name, text in {"beta": "717\n", "hystart": "Y\n", "fast_convergence": "N\n", "mode": "odd\n",
                       "initial_ssthresh": "-1\n"}.items():
        (folder / name).write_text(text)
    monkeypatch.setattr(kernel, "MODULE_PARAMETERS", tmp_path)
    assert kernel.module_parameters("cubic") == {"beta": 717, "fast_convergence": 0, "hystart": 1,
                                                 "initial_ssthresh": -1, "mode": "odd"}


def test_a_congestion_control_without_module_parameters_has_none(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "MODULE_PARAMETERS", tmp_path)
    assert kernel.module_parameters("reno") == {}
