"""The SDK's tests. The worker reads WEFT_URL, WEFT_NAMESPACE and WEFT_API_KEY when no option says
otherwise: a shell's own must not steer the tests, which set what they need. The server the tests run
against needs an API key: the suite gives it as WEFT_TEST_API_KEY, and every worker takes it from
WEFT_API_KEY."""

import os

for _name in ("WEFT_URL", "WEFT_NAMESPACE", "WEFT_API_KEY"):
    os.environ.pop(_name, None)

if os.environ.get("WEFT_TEST_API_KEY"):
    os.environ["WEFT_API_KEY"] = os.environ["WEFT_TEST_API_KEY"]
