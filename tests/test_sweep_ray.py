"""How the sweeps start Ray: token authentication said explicitly (no warning, nothing weakened), a
start that timed out on a loaded machine tried again (one that never comes up: a one-line error),
and a sweep's stderr free of Ray's token warning and of repeated ALE banners."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from pcnn_explore.cli import main
from pcnn_explore.sweep import ray_cluster as ray_module

TIMED_OUT = ("The current node timed out during startup. This could happen because some of the raylet failed "
             "to startup or the GCS has become overloaded.")


def _python(code: str, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_ADDRESS")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**environ, **env})


def test_token_authentication_is_said_not_dropped():
    pytest.importorskip("ray")
    code = ("import os, ray\nfrom ray._raylet import get_authentication_mode, AuthenticationMode\n"
            "from pcnn_explore.sweep import ray_cluster\nray_cluster._token_auth()\n"
            "print(os.environ['RAY_AUTH_MODE'], get_authentication_mode() == AuthenticationMode.TOKEN)")
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["token", "True"]  # this process and its children: token mode
    r = _python(code, RAY_AUTH_MODE="disabled")  # a mode the user chose stays
    assert r.stdout.split() == ["disabled", "False"]


def test_a_start_that_timed_out_is_tried_again(monkeypatch):
    ray = pytest.importorskip("ray")
    calls, shutdowns, started = [], [], []

    def init(**kw):
        calls.append(kw)
        started.append(subprocess.Popen(["sleep", "60"]))  # a process of this start (a GCS, a raylet)
        if len(calls) < ray_module.START_ATTEMPTS:
            raise Exception(TIMED_OUT)  # what ray.init raises when its node misses a deadline
        return "context"

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: shutdowns.append(1))
    monkeypatch.setattr(ray_module.time, "sleep", lambda s: None)
    monkeypatch.setattr(ray_module, "_SIGTERM_BEFORE_RAY", None)  # the start that comes up is never shut down here
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert ray_module.start_local(num_cpus=2, log_to_driver=False) == "context"
    assert len(calls) == ray_module.START_ATTEMPTS == 3 and len(shutdowns) == 2
    assert calls[0] == {"num_cpus": 2, "num_gpus": None, "include_dashboard": False, "log_to_driver": False}
    assert [p.wait(10) for p in started[:2]] == [-9, -9]  # the starts that timed out: their processes ended
    assert started[2].poll() is None  # the one that came up: left alone
    started[2].kill()
    started[2].wait()

    def failing(error):
        def init(**kw):
            calls.append(kw)
            raise error
        return init

    calls.clear()
    monkeypatch.setattr(ray, "init", failing(Exception(TIMED_OUT)))
    with pytest.raises(Exception, match="timed out during startup"):  # the last try's error is Ray's own
        ray_module.start_local()
    assert len(calls) == 3
    calls.clear()
    monkeypatch.setattr(ray, "init", failing(ValueError("bad argument")))
    with pytest.raises(ValueError):  # any other error: not tried again
        ray_module.start_local()
    assert len(calls) == 1


def test_the_ale_banner_is_printed_at_most_once_per_process():
    code = ("from pcnn_explore.envs import make_env\n"
            "for game in ('ALE/Pong-v5', 'ALE/Venture-v5', 'ALE/Pong-v5'):\n"
            "    env = make_env(game); env.reset(seed=0); env.close()\n")
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert (r.stdout + r.stderr).count("A.L.E: Arcade Learning Environment") <= 1


@pytest.mark.slow
def test_a_sweeps_stderr_has_no_token_warning(session_ray, tmp_path):
    """A local Ray started as ``sweep --executor ray`` starts one (the session's: conftest's
    tests/ray_holder.py, HOME in a fresh folder where Ray makes the token) warns of nothing, and
    neither does a one-trial sweep that joins it through ``$RAY_ADDRESS``."""
    assert "Token authentication" not in session_ray.stderr, session_ray.stderr
    assert session_ray.token.is_file()  # the cluster runs with a token, which Ray made in the fresh HOME
    environ = session_ray.environment_without_ray()
    join = session_ray.join_environment()
    join.pop("RAY_AUTH_MODE")  # the kit says token authentication itself where the cluster has a token
    r = subprocess.run([sys.executable, "-m", "pcnn_explore.cli", "sweep", "--envs", "MiniGrid-Serpentine-7x7-v0",
                        "--variants", "dqn", "--profile", "smoke", "--set", "steps=100", "--set", "tensorboard=false",
                        "--executor", "ray", "--no-progress", "--out", str(tmp_path / "s")], capture_output=True,
                       text=True, timeout=600, cwd=tmp_path, env={**environ, **join, "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert "1 of 1 trials done" in r.stdout
    assert "Token authentication" not in r.stderr and "A.L.E" not in r.stderr, r.stderr


def test_a_local_ray_that_never_starts_is_one_line_before_anything_is_written(tmp_path, capsys, monkeypatch):
    def connect(*args, **kwargs):
        raise Exception(TIMED_OUT)  # what start_local raises once its tries are spent

    monkeypatch.setattr(ray_module, "connect", connect)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    out = tmp_path / "s"
    status = main(["sweep", "--envs", "DeepSea-5-v0", "--variants", "dqn", "--profile", "smoke", "--executor", "ray",
                   "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1, err
    assert "the local Ray did not start in time on 3 tries" in err and "(--executor local)" in err
    assert not out.exists()


def test_sigterm_is_given_back_when_the_local_ray_stops(monkeypatch):
    """Ray's init sets its own SIGTERM handler in the driver and its shutdown leaves it: release() gives
    back the handler from before, so a run trained in the same process afterwards takes SIGTERM over."""
    ray = pytest.importorskip("ray")

    def rays_handler(signum, frame):  # what ray.init installs: sys.exit on SIGTERM
        raise SystemExit(signum)

    def init(**kw):
        signal.signal(signal.SIGTERM, rays_handler)
        return "context"

    def mine(signum, frame):
        pass

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 1.0})
    monkeypatch.setattr(ray_module, "_SIGTERM_BEFORE_RAY", None)
    monkeypatch.setattr(ray_module, "_STARTED_LOCAL", False)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    before = signal.signal(signal.SIGTERM, mine)
    try:
        ray_module.connect(num_cpus=1)
        assert signal.getsignal(signal.SIGTERM) is rays_handler
        ray_module.release()
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
