"""A recording HTTP(S) proxy in front of the Weft server under test, and a stand-in server for the unit
tests: each sees exactly what the worker sends."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit


@dataclass
class Exchange:
    """One request the worker sent, and the answer it got."""

    method: str
    path: str
    headers: Dict[str, str]
    request: Any
    status: int = 0
    response: Any = None
    extra: Dict[str, Any] = field(default_factory=dict)


Answer = Tuple[int, Any]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _any(self) -> None:
        server: "_Server" = self.server  # type: ignore[assignment]
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        exchange = Exchange(
            self.command,
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            json.loads(raw) if raw and "json" in (self.headers.get("content-type") or "") else raw.decode(),
        )
        status, body = server.answer(exchange, raw)
        exchange.status, exchange.response = status, body
        with server.lock:
            server.exchanges.append(exchange)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the worker hung up (a poll ended by a stop): nothing to answer
        if server.drop_idle:
            self.close_connection = True  # as a server closing idle keep-alive connections does

    do_GET = do_POST = _any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answer: Callable[[Exchange, bytes], Answer]
    lock: threading.Lock
    exchanges: List[Exchange]
    drop_idle: bool


class Proxy:
    """Forwards every request to ``upstream`` (the real server), unless ``answer`` answers it first, and
    records each exchange. With ``tls`` (an ``ssl.SSLContext`` holding a certificate) it serves HTTPS."""

    def __init__(
        self,
        upstream: Optional[str] = None,
        answer: Optional[Callable[[Exchange], Optional[Answer]]] = None,
        tls: Optional[ssl.SSLContext] = None,
        drop_idle: bool = False,
    ) -> None:
        self._upstream = urlsplit(upstream) if upstream else None
        self._answer = answer
        self._local = threading.local()
        self._conns: List[http.client.HTTPConnection] = []
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.answer = self._dispatch
        self.server.lock = threading.Lock()
        self.server.exchanges = []
        self.server.drop_idle = drop_idle
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def exchanges(self) -> List[Exchange]:
        with self.server.lock:
            return list(self.server.exchanges)

    def __enter__(self) -> "Proxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        for conn in self._conns:
            conn.close()

    def _dispatch(self, exchange: Exchange, raw: bytes) -> Answer:
        if self._answer is not None:
            given = self._answer(exchange)
            if given is not None:
                return given
        if self._upstream is None:
            return 404, {"error": {"code": "not_found", "message": f"no route {exchange.path}"}}
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self._upstream.hostname, self._upstream.port, timeout=120)
            self._local.conn = conn
            with self.server.lock:
                self._conns.append(conn)
        headers = {k: v for k, v in exchange.headers.items() if k not in ("host", "connection")}
        conn.request(exchange.method, exchange.path, body=raw or None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else None
