"""The central reporting hub (`lavos central`): one read-only view of several halls.

Each hall stays the authority for its tables and money (its own broker, hub and database); the
centre only receives: the halls' committed records through their outboxes (records.py, applied
once per (hall, seq)), their live state through Mosquitto bridges (live.py), and answers its own
operators and hall managers (reads.py, accounts.py), scoped by hall. PostgreSQL only.
docs/scaling.md, "several halls", says what runs where.
"""
