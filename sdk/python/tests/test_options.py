"""Options and connection settings are checked where they enter."""

from __future__ import annotations

import os
import ssl
import unittest
from unittest import mock

from weft_worker import Worker
from weft_worker.settings import connection_settings


def noop(input, ctx):
    return None


class SettingsTest(unittest.TestCase):
    def test_defaults_come_from_the_environment_then_the_local_server(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            s = connection_settings()
            self.assertEqual((s.url, s.namespace), ("http://127.0.0.1:8080", "default"))
            self.assertNotIn("authorization", s.headers)
        env = {"WEFT_URL": "https://weft.example:9443/base/", "WEFT_NAMESPACE": "shop", "WEFT_API_KEY": "k"}
        with mock.patch.dict(os.environ, env, clear=True):
            s = connection_settings()
        self.assertEqual((s.scheme, s.host, s.port, s.base_path), ("https", "weft.example", 9443, "/base"))
        self.assertEqual(s.headers["x-weft-namespace"], "shop")
        self.assertEqual(s.headers["authorization"], "Bearer k")
        self.assertIsInstance(s.ssl_context, ssl.SSLContext)

    def test_tls_files_come_from_the_environment_over_https_only(self) -> None:
        env = {"WEFT_CA_FILE": "/no/such/ca.pem"}
        with mock.patch.dict(os.environ, env, clear=True):
            with self.assertRaisesRegex(ValueError, "ca_file '/no/such/ca.pem' is not a readable file"):
                connection_settings(url="https://weft.example")
            self.assertIsNone(connection_settings(url="http://weft.example").ssl_context)

    def test_an_option_wins_over_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"WEFT_API_KEY": "env"}):
            self.assertEqual(connection_settings(api_key="given").headers["authorization"], "Bearer given")

    def test_bad_settings_are_refused_saying_what_to_change(self) -> None:
        cases = [
            (dict(url="127.0.0.1:8080"), "is not an http:// or https:// URL"),
            (dict(url="ftp://host"), "is not an http:// or https:// URL"),
            (dict(url="http://host:99999"), "port that is not a number"),
            (dict(url="http://user:pw@host"), "give the API key as api_key"),
            (dict(namespace="Shop"), "namespace 'Shop' is not valid"),
            (dict(api_key=" "), "api_key is empty"),
            (dict(headers={"X-Weft-Namespace": "x"}), "use namespace="),
            (dict(headers={"x-a": "b\r\nc"}), "must not contain line breaks"),
            (dict(headers={"x-a": 1}), "must map text to text"),
            (dict(ca_file="/nowhere.pem"), "TLS settings were given but the url is http://"),
            (dict(url="https://h", ca_file="/nowhere.pem"), "ca_file '/nowhere.pem' is not a readable file"),
            (dict(url="https://h", key_file=__file__), "key_file was given without cert_file"),
            (dict(url="https://h", ca_file=__file__), "could not be loaded"),
            (dict(url="https://h", ssl_context=ssl.create_default_context(), ca_file=__file__), "not both"),
        ]
        for given, says in cases:
            with self.subTest(given=given):
                with self.assertRaises(ValueError) as caught:
                    connection_settings(**given)
                self.assertIn(says, str(caught.exception))


class OptionsTest(unittest.TestCase):
    def test_defaults(self) -> None:
        o = Worker({"t": noop}).options
        self.assertEqual(
            (
                o.concurrency,
                o.poll_wait,
                o.reports_in_flight,
                o.request_timeout,
                o.connect_timeout,
                o.stop_timeout,
            ),
            (10, 20.0, 2, 30.0, 30.0, 30.0),
        )
        self.assertRegex(Worker({"t": noop}).name, r"-\d+-[a-z0-9]{4}$")

    def test_bad_options_are_refused_saying_what_to_change(self) -> None:
        cases = [
            (dict(handlers={}), ValueError, "needs at least one handler"),
            (dict(handlers={"": noop}), ValueError, "1 to 128 characters"),
            (dict(handlers={"t": "noop"}), TypeError, "is not callable"),
            (dict(handlers={f"t{i}": noop for i in range(101)}), ValueError, "at most 100 task types"),
            (dict(name=""), ValueError, "name '' must be text"),
            (dict(concurrency=0), ValueError, "concurrency must be a whole number"),
            (dict(concurrency=2.5), ValueError, "concurrency must be a whole number"),
            (dict(poll_wait=61), ValueError, "poll_wait is in seconds"),
            (dict(reports_in_flight=True), ValueError, "reports_in_flight"),
            (dict(connect_timeout=0), ValueError, "connect_timeout"),
            (dict(stop_timeout=-1), ValueError, "stop_timeout"),
        ]
        for given, kind, says in cases:
            with self.subTest(given=given):
                args = {"handlers": {"t": noop}, **given}
                with self.assertRaises(kind) as caught:
                    Worker(args.pop("handlers"), **args)
                self.assertIn(says, str(caught.exception))

    def test_a_worker_starts_once(self) -> None:
        worker = Worker({"t": noop})
        worker.stop()
        with self.assertRaisesRegex(RuntimeError, "a worker starts once"):
            worker.start()


if __name__ == "__main__":
    unittest.main()
