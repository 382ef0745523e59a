"""Files the owner sends from Discord, kept as local files for agents (downloads, records)."""
