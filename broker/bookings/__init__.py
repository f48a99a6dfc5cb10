"""Bookings of tables, blocks and the waiting list."""
