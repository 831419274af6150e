"""Shared test helpers and independent oracles (imported by tests, never collected)."""
