"""Pure mathematics of the paper, no torch: RoPE in four number systems
(`theory.numbers`, `theory.rope`) and the Index/Retrieval/Reflexive functions
with the multi-hop solvers (`theory.functions`)."""
