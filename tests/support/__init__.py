"""Helpers shared by several test modules: plain functions and constants, so no test module imports another."""
