"""Command helpers that sit between the CLI and the models."""
