# SPDX-License-Identifier: Apache-2.0
"""Headless Chromium (Debian's `chromium`) for the report tests and the README screenshots:
load a page with the network disabled, collect console errors, dump the DOM, take a screenshot,
and tell whether a PNG is blank. Used by tests/python/test_visual.py and scripts/screenshots.py."""
import os
import shutil
import subprocess
import tempfile
import zlib

# Console errors and uncaught exceptions, recorded into the DOM before anything else runs.
_CAPTURE = ("<script>window.__errors=[];(function(){var e=console.error.bind(console);"
            "console.error=function(){window.__errors.push(Array.from(arguments).join(' '));"
            "e.apply(null,arguments);};window.addEventListener('error',function(x){"
            "window.__errors.push('uncaught: '+x.message);});"
            "document.addEventListener('DOMContentLoaded',function(){setTimeout(function(){"
            "var d=document.createElement('pre');d.id='captured-errors';"
            "d.textContent=JSON.stringify(window.__errors);document.body.appendChild(d);},3000);});"
            "})();</script>")


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _base_args(profile):
    return ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            f"--user-data-dir={profile}",
            # No network: every host name fails to resolve and any proxied request goes nowhere
            # (loopback bypasses the proxy: a local TensorBoard on 127.0.0.1 still works).
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--proxy-server=http://127.0.0.1:9",
            "--enable-logging=stderr", "--log-level=0"]


def run(url, screenshot=None, size=(1400, 2000), budget_ms=15000, timeout=180):
    """Load `url`; return (dom text, chromium's stderr). With `screenshot`, a PNG is written."""
    exe = chromium_path()
    if exe is None:
        raise FileNotFoundError("chromium not found (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        args = [exe, *_base_args(profile), f"--virtual-time-budget={budget_ms}",
                f"--window-size={size[0]},{size[1]}"]
        if screenshot:
            args += [f"--screenshot={os.path.abspath(screenshot)}", "--hide-scrollbars"]
        else:
            args += ["--dump-dom"]
        r = subprocess.run(args + [url], capture_output=True, text=True, timeout=timeout)
        return r.stdout, r.stderr


def load_with_error_capture(html_path, budget_ms=15000):
    """Load a copy of the HTML file whose <head> starts with a console-error recorder; return
    (dom, list of console errors / uncaught exceptions, chromium's console log lines)."""
    import json
    with open(html_path, encoding="utf-8") as f:
        page = f.read()
    page = page.replace("<head>", "<head>" + _CAPTURE, 1)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "page.html")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(page)
        dom, log = run("file://" + copy, budget_ms=budget_ms)
    errors = []
    start = dom.find('<pre id="captured-errors">')
    if start < 0:
        errors.append("the error recorder did not run (page did not finish loading)")
    else:
        end = dom.find("</pre>", start)
        text = dom[start + len('<pre id="captured-errors">'):end]
        text = text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        errors.extend(json.loads(text))
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    errors.extend(line for line in console if "Uncaught" in line or "Failed to load" in line)
    return dom, errors, console


def png_is_blank(path, min_distinct=8):
    """True when the PNG's pixel bytes take fewer than `min_distinct` distinct values (a blank or
    single-colour page), or when it cannot be read."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return True
    pos, idat = 8, b""
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    try:
        raw = zlib.decompress(idat)
    except zlib.error:
        return True
    return len(set(raw[::7])) < min_distinct
