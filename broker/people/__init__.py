"""People: members, staff accounts and logins (the hall side of broker.accounts)."""
