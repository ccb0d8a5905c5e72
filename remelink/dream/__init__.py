"""The dream pipeline: extract units from changed raw notes, integrate each into the digest
(auto-link), checkpoint, tag, and optionally pick the day's topics."""
