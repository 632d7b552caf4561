"""Snapshots: facts about a cluster captured on disk, and synthetic clusters."""
