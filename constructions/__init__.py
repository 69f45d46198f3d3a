"""Hand-built one-layer RoPE transformers T_Index and T_Retrieval (Appendix F.2)."""
