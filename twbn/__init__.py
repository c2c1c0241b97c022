"""twbn (placeholder for the front door)."""
