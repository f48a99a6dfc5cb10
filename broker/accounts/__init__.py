"""Staff accounts: who may log in, their passwords and dashboard sessions, and the value types the dashboard sees."""
