"""The network only: the GPT-J in one file (``gptj``), its building blocks (``layers``), its
configuration (``config``), K seeds as one batched model (``batched``) and a model folder's
weights (``weights``).  The run lifecycle around it is ``training.run``.

May import ``theory``; imports nothing of ``training.run``.
"""
