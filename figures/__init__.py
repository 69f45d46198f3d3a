"""Figures of the paper regenerated from saved results."""
