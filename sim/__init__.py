"""Simulation: mock pins with scripted edge times, a simulated player, and the interim demo.

A composition root like the tests: it may import edge/, devices/ and broker/.
"""
