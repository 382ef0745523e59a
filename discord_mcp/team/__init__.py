"""Several machines, one bot: who answers what, with Discord itself as the bus."""
