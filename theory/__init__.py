"""Pure mathematics of the paper, no torch: RoPE in four number systems
(`theory.numbers`, `theory.rope`) and the Index/Retrieval/Reflexive functions
with the multi-hop solvers (`theory.functions`).  Three modules are plumbing kept here
because every package may import `theory`: the paper's printed numbers (`paper_data`),
atomic files (`files`) and one-line command-line errors (`cli`)."""
