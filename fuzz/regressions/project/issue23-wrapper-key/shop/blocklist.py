from shop.db import database


def unblock_address(address, user):
    """Stop ignoring a blocked address."""
    with database.get_cursor() as cursor:
        audit = {"by": user.id, "address": address.lower(), "note": str(user.name).strip()}
        rows = cursor.all("""
            UPDATE blocked_addresses
               SET ignore_after = current_timestamp
                 , ignored_by = %(by)s
             WHERE lower(address) = lower(%(address)s)
               AND (ignore_after IS NULL OR ignore_after > current_timestamp)
         RETURNING *
        """, dict(by=audit["by"], address=audit["address"], note=audit["note"]))
        return rows
