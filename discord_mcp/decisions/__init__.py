"""Decisions: questions to the owner, their answers, and waiting for them."""
