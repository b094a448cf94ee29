"""The example worker for examples/order-fulfilment.yaml, in Python. Run it against a Weft server:

    WEFT_URL=http://127.0.0.1:8080 python3 examples/order_worker.py

The payment handler fails one time in ten, like a flaky bank; Weft retries it. Ctrl-C stops it gracefully.
"""

import logging
import os
import random
import time
import uuid

from weft_worker import TerminalError, Worker


def pause(low_ms, high_ms):
    time.sleep(random.uniform(low_ms, high_ms) / 1000)


def validate(input, ctx):
    pause(1, 5)
    if any(item["qty"] > 100 for item in input["order"]["items"]):
        raise TerminalError("an order may not ask for more than 100 of one item")
    return {"valid": True}


def reserve(input, ctx):
    pause(2, 10)
    return {"reservation_id": f"res_{uuid.uuid4().hex[:8]}", "lines": len(input["items"])}


def charge(input, ctx):
    pause(5, 20)
    if random.random() < 0.1:
        raise ConnectionError("bank timeout (simulated)")
    # A real bank gets ctx.idempotency_key as its idempotency key: the same on every attempt of this step,
    # so a retry after a timeout is recognised and never charged twice. Here it names the payment.
    return {"payment_id": f"pay_{ctx.idempotency_key[:8]}", "charged": input["amount"]}


def dispatch(input, ctx):
    pause(2, 10)
    return {"tracking": f"TRK-{input['order_id']}"}


def send_mail(input, ctx):
    pause(1, 5)
    return {"sent": True, "to": input["to"], "template": input["template"]}


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    Worker(
        {
            "orders.validate": validate,
            "inventory.reserve": reserve,
            "payments.charge": charge,
            "shipping.dispatch": dispatch,
            "mail.send": send_mail,
        },
        concurrency=int(os.environ.get("WEFT_CONCURRENCY", "20")),
    ).run()
