"""Invoice PDF generation and numbering."""
import logging
import uuid

import redis

from payments import db, pdf

log = logging.getLogger("payments.invoices")

r = redis.Redis(host="redis", port=6379, db=0)

RELEASE_SCRIPT = """
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
"""


class InvoiceService:
    def __init__(self, client=r):
        self.redis = client
        self._release = client.register_script(RELEASE_SCRIPT)

    def finalize(self, invoice_id):
        """Assign the next invoice number and render the PDF, exactly once."""
        key = f"invoice:{invoice_id}:finalizing"
        token = uuid.uuid4().hex
        # No expiry: if this process dies here the invoice stays locked forever.
        if not self.redis.set(key, token, nx=True):
            raise RuntimeError(f"invoice {invoice_id} is already being finalized")
        try:
            invoice = db.load_invoice(invoice_id)
            invoice.number = db.next_invoice_number(invoice.account_id)
            invoice.pdf_url = pdf.render(invoice)
            db.save_invoice(invoice)
            log.info("finalized invoice %s as %s", invoice_id, invoice.number)
            return invoice
        finally:
            self._release(keys=[key], args=[token])
