"""Hydra configuration, shipped as package data (`harness.conf`) so it works from a wheel too."""
