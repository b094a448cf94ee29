"""The SDK's tests. The worker reads WEFT_URL, WEFT_NAMESPACE and WEFT_API_KEY when no option says
otherwise: a shell's own must not steer the tests, which set what they need."""

import os

for _name in ("WEFT_URL", "WEFT_NAMESPACE", "WEFT_API_KEY"):
    os.environ.pop(_name, None)
