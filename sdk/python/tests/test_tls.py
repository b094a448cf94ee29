"""TLS: a server certificate signed by a CA of one's own, and client certificates."""

from __future__ import annotations

import shutil
import ssl
import unittest

from weft_worker import WeftConnectionError, Worker

from .proxy import Proxy
from .support import SERVER, Api, running, unique
from .test_connection import fake, noop
from .tls import OPENSSL, Certificates, make_certificates

CERTS: Certificates


def tls_server(require_client: bool) -> ssl.SSLContext:
    """What the test's HTTPS proxy serves with."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERTS.server_cert, CERTS.server_key)
    if require_client:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(CERTS.ca)
    return context


@unittest.skipIf(OPENSSL is None, "needs the openssl command to make certificates; it is not on PATH")
class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        global CERTS
        made = make_certificates()
        assert made is not None
        CERTS = made

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(CERTS.folder, ignore_errors=True)

    @unittest.skipUnless(SERVER, "needs a Weft server: set WEFT_TEST_URL")
    def test_a_workflow_completes_over_tls_with_a_client_certificate(self) -> None:
        api = Api()
        name, kind = unique("py_tls"), unique("py.tls")
        api.deploy(f"name: {name}\nnodes:\n  - {{ id: a, task_type: {kind} }}\n")
        run_id = api.start(name, {"x": 1})
        with Proxy(SERVER, tls=tls_server(require_client=True)) as proxy:
            self.assertTrue(proxy.url.startswith("https://"))
            worker = Worker(
                {kind: lambda i, c: {"echo": i}},
                url=proxy.url,
                ca_file=CERTS.ca,
                cert_file=CERTS.client_cert,
                key_file=CERTS.client_key,
            )
            with running(worker):
                run = api.wait_run(run_id)
        self.assertEqual(run["output"], {"a": {"echo": {"x": 1}}})
        self.assertIn("/v1/tasks/report", {x.path for x in proxy.exchanges})

    def test_an_ssl_context_of_ones_own_is_used(self) -> None:
        context = ssl.create_default_context(cafile=CERTS.ca)
        with Proxy(answer=fake(), tls=tls_server(require_client=False)) as server:
            with running(Worker({"t": noop}, url=server.url, ssl_context=context, poll_wait=0.05), timeout=5):
                pass
        self.assertEqual(server.exchanges[0].path, "/v1/tasks/dispatch")

    def test_a_certificate_from_an_unknown_authority_fails_at_once(self) -> None:
        for ca_file in (None, CERTS.other_ca):
            with Proxy(answer=fake(), tls=tls_server(require_client=False)) as server:
                with self.assertRaises(WeftConnectionError) as caught:
                    Worker({"t": noop}, url=server.url, ca_file=ca_file, connect_timeout=60).start()
            # At once: the error is the verification's own, not the end of 60 s of trying.
            self.assertTrue(
                str(caught.exception).startswith(f"the TLS certificate of {server.url} could not be verified")
            )
            self.assertIn("give the certificate authority that signed it as ca_file", str(caught.exception))

    def test_a_missing_client_certificate_fails_at_once(self) -> None:
        with Proxy(answer=fake(), tls=tls_server(require_client=True)) as server:
            with self.assertRaises(WeftConnectionError) as caught:
                Worker({"t": noop}, url=server.url, ca_file=CERTS.ca, connect_timeout=60).start()
        self.assertTrue(
            str(caught.exception).startswith(f"TLS with {server.url} failed"), str(caught.exception)
        )
        self.assertEqual(server.exchanges, [])


if __name__ == "__main__":
    unittest.main()
