"""Notebook 11's episode viewer in a real browser: JupyterLab on loopback, headless Chromium.

Starts JupyterLab on 127.0.0.1 (random free port, random token, temporary config, settings and
workspace directories, a copy of the notebook in a temporary root), drives Debian's Chromium
(/usr/bin/chromium) with Playwright, runs every cell, drags the slider, and checks that the frame
image and the trace cursor changed (both the image URLs in the DOM and their screenshots). The
server is stopped at the end whatever happens. Skipped only where Chromium is not installed
(``apt-get install -y chromium``).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "11_intrinsic_reward_episode.ipynb"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with status {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture
def jupyterlab(tmp_path):
    """(base URL, token) of a JupyterLab serving a copy of notebook 11; stopped afterwards."""
    root, config, runtime = tmp_path / "root", tmp_path / "config", tmp_path / "runtime"
    for d in (root, config, runtime):
        d.mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, root / NOTEBOOK)
    port, token = _free_port(), secrets.token_hex(16)
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"open_browser": False}}))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_RUNTIME_DIR": str(runtime),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
           "PCNN_EXPLORE_PROFILE": "smoke", "OMP_NUM_THREADS": "1"}
    log = tmp_path / "jupyterlab.log"
    with open(log, "w") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
             "--ServerApp.terminals_enabled=False", *(["--allow-root"] if os.geteuid() == 0 else [])],
            cwd=root, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for_server(f"{base}/api/status?token={token}", proc, log)
        # Start the notebook's kernel session before the page opens: JupyterLab then attaches to it
        # instead of racing to start (and replace) a kernel while the notebook loads.
        body = {"path": NOTEBOOK, "name": NOTEBOOK, "type": "notebook", "kernel": {"name": "python3"}}
        request = urllib.request.Request(f"{base}/api/sessions?token={token}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=60) as r:
            assert r.status == 201, r.read()
        yield base, token
    finally:
        _stop(proc)


def test_viewer_scrubs_in_chromium(jupyterlab, tmp_path):
    from playwright.sync_api import sync_playwright

    base, token = jupyterlab
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1200})
            page.set_default_timeout(120_000)
            page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            page.wait_for_function(
                "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                " const k = w && w.sessionContext && w.sessionContext.isReady && w.sessionContext.session"
                "  && w.sessionContext.session.kernel;"
                " return k && k.status === 'idle' && k.connectionStatus === 'connected'; }")
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

            viewer = page.wait_for_selector(".pcnn-episode-viewer", timeout=180_000)
            frame = page.locator("img.pcnn-frame").first
            trace = page.locator("img.pcnn-trace").first
            readout = page.locator(".pcnn-readout")
            page.wait_for_function("() => { const i = document.querySelector('img.pcnn-frame');"
                                   " return i && i.src && i.complete && i.naturalWidth > 0; }")
            assert "step 0" in readout.inner_text()
            frame.scroll_into_view_if_needed()
            before = {"frame_src": frame.get_attribute("src"), "trace_src": trace.get_attribute("src"),
                      "frame_png": frame.screenshot(), "trace_png": trace.screenshot()}

            # Drag the slider's handle to the right, as a person would.
            handle = page.locator(".pcnn-slider .noUi-handle").first
            track = page.locator(".pcnn-slider .noUi-target, .pcnn-slider .slider").first
            handle.scroll_into_view_if_needed()
            h, t = handle.bounding_box(), track.bounding_box()
            page.mouse.move(h["x"] + h["width"] / 2, h["y"] + h["height"] / 2)
            page.mouse.down()
            page.mouse.move(t["x"] + 0.45 * t["width"], h["y"] + h["height"] / 2, steps=8)
            page.mouse.up()
            page.wait_for_function("() => { const r = document.querySelector('.pcnn-readout');"
                                   " return r && !/step 0(\\D|$)/.test(r.innerText); }")
            page.wait_for_function("(old) => { const i = document.querySelector('img.pcnn-frame');"
                                   " return i.src !== old && i.complete && i.naturalWidth > 0; }",
                                   arg=before["frame_src"])
            page.wait_for_timeout(500)  # let the trace image finish decoding too
            step = int(readout.inner_text().split("step", 1)[1].split()[0])
            assert 0 < step < 500
            slider_text = page.locator(".pcnn-slider .widget-readout").first.inner_text().strip()
            assert slider_text == str(step)  # the readout follows the slider
            after = {"frame_src": frame.get_attribute("src"), "trace_src": trace.get_attribute("src"),
                     "frame_png": frame.screenshot(), "trace_png": trace.screenshot()}
            (tmp_path / "viewer_after.png").write_bytes(viewer.screenshot())
            assert after["frame_src"] != before["frame_src"]
            assert after["trace_src"] != before["trace_src"]
            assert after["frame_png"] != before["frame_png"], "the frame image did not change on screen"
            assert after["trace_png"] != before["trace_png"], "the trace cursor did not move on screen"

            # Play advances the slider through the browser-side link (jslink), and the kernel redraws.
            page.locator(".pcnn-play button").first.click()
            page.wait_for_function(
                "(s) => { const r = document.querySelector('.pcnn-slider .widget-readout');"
                " return r && parseInt(r.innerText) >= s + 3; }", arg=step)
            page.locator(".pcnn-play button").first.click()  # pause
            page.wait_for_function(
                "(s) => { const r = document.querySelector('.pcnn-readout');"
                " const m = /step (\\d+)/.exec(r.innerText); return m && parseInt(m[1]) >= s + 3; }", arg=step)
        finally:
            browser.close()
