"""Certificates for the TLS tests, made with the openssl command: a CA, a server and a client."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional

OPENSSL = shutil.which("openssl")


@dataclass(frozen=True)
class Certificates:
    folder: str
    ca: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str
    other_ca: str


def make_certificates() -> Optional[Certificates]:
    """A fresh CA signing a server certificate for 127.0.0.1 and a client certificate, and a second CA
    that signed neither; None when openssl is missing."""
    if OPENSSL is None:
        return None
    d = tempfile.mkdtemp(prefix="weft-tls-")
    p = lambda name: os.path.join(d, name)  # noqa: E731

    def run(*args: str) -> None:
        subprocess.run([OPENSSL, *args], check=True, capture_output=True, cwd=d)

    for ca in ("ca", "other"):
        run(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            f"/CN=weft test {ca}",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            p(f"{ca}.key"),
            "-out",
            p(f"{ca}.pem"),
        )
    leaf = (
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
    )
    with open(p("server.ext"), "w") as f:
        f.write(leaf + "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    with open(p("client.ext"), "w") as f:
        f.write(leaf + "extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        run(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN=weft test {who}",
            "-keyout",
            p(f"{who}.key"),
            "-out",
            p(f"{who}.csr"),
        )
        run(
            "x509",
            "-req",
            "-in",
            p(f"{who}.csr"),
            "-CA",
            p("ca.pem"),
            "-CAkey",
            p("ca.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            p(f"{who}.ext"),
            "-out",
            p(f"{who}.pem"),
        )
    return Certificates(
        d, p("ca.pem"), p("server.pem"), p("server.key"), p("client.pem"), p("client.key"), p("other.pem")
    )
