"""Attention layers (filled in below)."""

RULES = {}
