"""The state directory: every file written atomically, versioned, and locked where shared."""
