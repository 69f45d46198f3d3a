"""The 1-hop LLM harness of Appendix H: its tasks, prompts, backends (local HF, OpenAI-style
HTTP) and evaluation; ``python -m training llm``.  Table 3's printed numbers are in
``theory.paper_data``.

May import ``theory`` only.
"""
