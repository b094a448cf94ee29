"""Where the server is and how to talk to it: URL, namespace, API key, extra headers and TLS."""

from __future__ import annotations

import os
import re
import ssl
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional
from urllib.parse import urlsplit

from .version import __version__

NAMESPACE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
# Headers the SDK sets itself; ``headers`` cannot replace them.
OWN_HEADERS = ("content-type", "x-weft-namespace")


@dataclass(frozen=True)
class ConnectionSettings:
    """Checked connection settings. Build them with :func:`connection_settings`."""

    scheme: str
    host: str
    port: int
    base_path: str
    url: str
    namespace: str
    headers: Dict[str, str] = field(default_factory=dict)
    ssl_context: Optional[ssl.SSLContext] = None


def connection_settings(
    url: Optional[str] = None,
    namespace: Optional[str] = None,
    api_key: Optional[str] = None,
    headers: Optional[Mapping[str, str]] = None,
    ca_file: Optional[str] = None,
    cert_file: Optional[str] = None,
    key_file: Optional[str] = None,
    ssl_context: Optional[ssl.SSLContext] = None,
) -> ConnectionSettings:
    """Checks every setting where it enters and raises ``ValueError`` saying what to change.

    ``url`` defaults to ``WEFT_URL``, then ``http://127.0.0.1:8080``; ``namespace`` to ``WEFT_NAMESPACE``,
    then ``default``; ``api_key`` to ``WEFT_API_KEY`` (sent as ``Authorization: Bearer <key>``). Over
    https, ``ca_file``, ``cert_file`` and ``key_file`` default to ``WEFT_CA_FILE``, ``WEFT_CLIENT_CERT`` and
    ``WEFT_CLIENT_KEY``.
    """
    url = url or os.environ.get("WEFT_URL") or "http://127.0.0.1:8080"
    namespace = namespace or os.environ.get("WEFT_NAMESPACE") or "default"
    api_key = api_key if api_key is not None else os.environ.get("WEFT_API_KEY") or None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"url {url!r} is not an http:// or https:// URL with a host, such as http://127.0.0.1:8080"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(
            f"url {url!r} must not carry a query, a fragment or credentials: give the API key as api_key"
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"url {url!r} has a port that is not a number from 1 to 65535") from None
    if not NAMESPACE.match(namespace):
        raise ValueError(
            f"namespace {namespace!r} is not valid: use lowercase letters, digits, '_' and '-' (at most 63)"
        )
    if parts.scheme == "https" and ssl_context is None:
        ca_file = ca_file or os.environ.get("WEFT_CA_FILE") or None
        cert_file = cert_file or os.environ.get("WEFT_CLIENT_CERT") or None
        key_file = key_file or os.environ.get("WEFT_CLIENT_KEY") or None
    context = _tls(parts.scheme, ca_file, cert_file, key_file, ssl_context)
    return ConnectionSettings(
        scheme=parts.scheme,
        host=parts.hostname,
        port=port,
        base_path=parts.path.rstrip("/"),
        url=url.rstrip("/"),
        namespace=namespace,
        headers=_headers(namespace, api_key, headers or {}),
        ssl_context=context,
    )


def _headers(namespace: str, api_key: Optional[str], extra: Mapping[str, str]) -> Dict[str, str]:
    out: Dict[str, str] = {"user-agent": f"weft-worker-python/{__version__}", "accept": "application/json"}
    for name, value in extra.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValueError(f"headers must map text to text; {name!r}: {value!r} does not")
        if name.lower() in OWN_HEADERS:
            raise ValueError(f"header {name!r} is set by the SDK: use namespace= for x-weft-namespace")
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise ValueError(f"header {name!r} must not contain line breaks")
        out[name.lower()] = value
    if api_key is not None:
        if not api_key.strip() or any(c in api_key for c in "\r\n"):
            raise ValueError("api_key is empty or contains a line break: give the key exactly as issued")
        out["authorization"] = f"Bearer {api_key}"
    out["x-weft-namespace"] = namespace
    return out


def _tls(
    scheme: str,
    ca_file: Optional[str],
    cert_file: Optional[str],
    key_file: Optional[str],
    given: Optional[ssl.SSLContext],
) -> Optional[ssl.SSLContext]:
    if scheme == "http":
        if given is not None or ca_file or cert_file or key_file:
            raise ValueError("TLS settings were given but the url is http://: use an https:// url")
        return None
    if given is not None:
        if ca_file or cert_file or key_file:
            raise ValueError("give either ssl_context or ca_file/cert_file/key_file, not both")
        return given
    if key_file and not cert_file:
        raise ValueError("key_file was given without cert_file: give the client certificate too")
    for label, path in (("ca_file", ca_file), ("cert_file", cert_file), ("key_file", key_file)):
        if path and not os.path.isfile(path):
            raise ValueError(f"{label} {path!r} is not a readable file")
    try:
        context = ssl.create_default_context(cafile=ca_file)
        if cert_file:
            context.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, OSError) as e:
        raise ValueError(
            f"the TLS files could not be loaded ({e}): check that they are PEM files that match"
        ) from e
    return context
