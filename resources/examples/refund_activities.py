"""Example activities for refund_workflow.json.

    contextdeck run resources/examples/refund_workflow.json --activities resources/examples/refund_activities.py

`issueRefund` is async and writes its result; `notifyCustomer` has no `_outputPath` in the plan, so it is
fire-and-forget: it runs, nobody waits for it, and its result is dropped (the debugger still records it).
"""

from contextdeck.engine import activity


@activity("issueRefund", timeout=5)
async def issue_refund(call, tool, context):
    """Pretend to pay: the refund never exceeds what the order says was paid."""
    return {"refundId": "R-" + call["orderId"], "amount": call["amount"], "approvedBy": call.get("approvedBy")}


def notify_customer(call, tool, context):
    """A real one would send an email; this one only says what it would send."""
    return f"to {call['email']}: {call['message']}"


ACTIVITIES = {"notifyCustomer": notify_customer}
