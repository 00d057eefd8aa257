# SPDX-License-Identifier: Apache-2.0
"""A real S3-compatible server on loopback for the S3 tests: moto's server mode (PyPI
``moto[server]``), started on a free port of 127.0.0.1, plus a small HTTP proxy in front of it
that counts requests and body bytes and can inject faults (503 SlowDown, connection resets,
bodies cut short) for a fraction of requests. Nothing reaches beyond loopback."""
import contextlib
import http.client
import os
import random
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import http.server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoServer:
    """moto_server on 127.0.0.1:<free port>; ``endpoint`` is its URL. ``stop()`` ends it."""

    def __init__(self):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
        if exe is None:
            raise RuntimeError("moto_server is not installed (pip install 'moto[server]')")
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"moto_{self.port}.log"), "w")
        self.process = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto_server did not start within 60 s")

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


class _ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class CountingProxy:
    """An HTTP proxy on 127.0.0.1:<free port> forwarding to ``upstream`` (host, port). Counts
    requests and response body bytes (``requests``, ``body_bytes``, ``ranged_gets``, and
    ``event_bytes``, those of event files); with
    ``fault_rate`` > 0 answers that fraction of requests with one of the faults in ``faults``
    ("slowdown": 503 SlowDown, "reset": the connection closed without an answer, "short": the
    headers of the real answer and half of its body, then the connection closed)."""

    def __init__(self, upstream_port, fault_rate=0.0, faults=("slowdown", "reset", "short"), seed=7):
        self.upstream_port = upstream_port
        self.fault_rate = fault_rate
        self.faults = faults
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.reset_counts()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy.lock:
                    proxy.requests += 1
                    if self.command == "GET" and "Range" in self.headers:
                        proxy.ranged_gets += 1
                    fault = None
                    if proxy.fault_rate > 0 and proxy.random.random() < proxy.fault_rate:
                        fault = proxy.random.choice(proxy.faults)
                        proxy.faults_injected[fault] = proxy.faults_injected.get(fault, 0) + 1
                if fault == "reset":
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault == "slowdown":
                    payload = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code>"
                               b"<Message>Please reduce your request rate.</Message></Error>")
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                conn.request(self.command, self.path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                conn.close()
                self.send_response(response.status)
                for k, v in response.getheaders():
                    if k.lower() in ("transfer-encoding", "connection", "content-length"):
                        continue
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                if fault == "short" and len(data) > 1:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(data)
                with proxy.lock:
                    proxy.body_bytes += len(data)
                    if self.command == "GET" and "/events/" in self.path:
                        proxy.event_bytes += len(data)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.server = _ThreadingServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset_counts(self):
        with self.lock:
            self.requests = 0
            self.ranged_gets = 0
            self.body_bytes = 0
            self.event_bytes = 0  # body bytes of GETs of event files (keys with /events/)
            self.faults_injected = {}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
