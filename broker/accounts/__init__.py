"""Staff accounts: who may log in, their passwords and logins, and the value types the dashboard sees."""
