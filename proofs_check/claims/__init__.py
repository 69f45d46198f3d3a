"""Importing this package registers every claim module's checks."""

from . import foundation  # noqa: F401
