"""One keep-alive HTTP connection to the Weft server, speaking JSON both ways."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from typing import Any, Optional

from .errors import WeftApiError, WeftConnectionError
from .settings import ConnectionSettings

# Errors a reused keep-alive connection gives when the server closed it while idle: the request never
# reached the server, so it is sent once more on a fresh connection.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class Transport:
    """A single connection, used by one thread at a time (each of the worker's threads has its own).

    ``abort()`` may be called from any thread: it ends the request in progress (a long poll) at once and
    makes every later call fail, so a stopping worker is not held up by a poll waiting on the server.
    """

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._conn: Optional[http.client.HTTPConnection] = None
        self._used = False
        self._lock = threading.Lock()
        self._aborted = False

    def call(self, method: str, path: str, body: Optional[bytes] = None, timeout: float = 30.0) -> Any:
        """Sends one request and returns the parsed JSON answer.

        Raises :class:`WeftConnectionError` when the server cannot be reached or does not answer in
        ``timeout`` seconds, and :class:`WeftApiError` for an error answer (status 400 and above).
        """
        try:
            return self._send(method, path, body, timeout)
        except STALE as e:
            if not self._reused_and_reset():
                raise self._unreachable(e) from e
            try:
                return self._send(method, path, body, timeout)
            except (OSError, http.client.HTTPException) as again:
                self._drop()
                raise self._unreachable(again) from again
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise self._unreachable(e) from e

    def abort(self) -> None:
        """Ends the request in progress, if any, and refuses later ones."""
        with self._lock:
            self._aborted = True
            conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        """Closes the connection; the next call opens a new one."""
        self._drop()

    def _send(self, method: str, path: str, body: Optional[bytes], timeout: float) -> Any:
        conn = self._connection(timeout)
        headers = dict(self.settings.headers)
        if body is not None:
            headers["content-type"] = "application/json"
        conn.request(method, self.settings.base_path + path, body=body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        self._used = True
        if response.will_close:
            self._drop()
        return _answer(response.status, raw, method, path)

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        with self._lock:
            if self._aborted:
                raise WeftConnectionError("the worker is stopping: no more requests are sent")
            if self._conn is None:
                s = self.settings
                if s.scheme == "https":
                    self._conn = http.client.HTTPSConnection(
                        s.host, s.port, timeout=timeout, context=s.ssl_context
                    )
                else:
                    self._conn = http.client.HTTPConnection(s.host, s.port, timeout=timeout)
                self._used = False
            conn = self._conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def _reused_and_reset(self) -> bool:
        reused = self._used and not self._aborted
        self._drop()
        return reused

    def _drop(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            self._used = False
        if conn is not None:
            conn.close()

    def _unreachable(self, cause: BaseException) -> WeftConnectionError:
        where = self.settings.url
        if self._aborted:
            return WeftConnectionError("the worker is stopping: the request was ended", cause)
        if isinstance(cause, ssl.SSLCertVerificationError):
            return WeftConnectionError(
                f"the TLS certificate of {where} could not be verified ({cause.verify_message}): give the "
                "certificate authority that signed it as ca_file",
                cause,
            )
        if isinstance(cause, ssl.SSLError):
            return WeftConnectionError(
                f"TLS with {where} failed ({cause}): check ca_file, and cert_file and key_file when the "
                "server asks for a client certificate",
                cause,
            )
        if isinstance(cause, (socket.timeout, TimeoutError)):
            return WeftConnectionError(f"{where} did not answer in time ({cause})", cause)
        return WeftConnectionError(f"cannot reach {where}: {cause or type(cause).__name__}", cause)


def _answer(status: int, raw: bytes, method: str, path: str) -> Any:
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
        if status < 400:
            raise WeftApiError(
                status,
                "bad_answer",
                f"{method} {path} answered {status} with a body that is not JSON: "
                "is the url that of a Weft server?",
            ) from None
    if status < 400:
        return parsed
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _raise(status, str(error.get("code") or f"http_{status}"), error["message"])
    snippet = raw[:200].decode("utf-8", "replace").strip()
    return _raise(
        status,
        f"http_{status}",
        f"{method} {path} answered {status} without a Weft error ({snippet!r}): "
        "is the url that of a Weft server?",
    )


def _raise(status: int, code: str, message: str) -> Any:
    raise WeftApiError(status, code, message)
