"""What may leave the machine for Discord: secrets redacted, files checked (outbound safety)."""
