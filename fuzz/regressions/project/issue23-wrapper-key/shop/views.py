from shop.blocklist import unblock_address


def post(body, user):
    unblock_address(body, user)
