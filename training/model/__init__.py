"""The GPT-J in one file (``gptj``), the training recipes (``presets``), the training loop,
checkpoints and the speed bench; ``python -m training train`` and ``bench``.

May import ``training.tasks`` and ``theory``.
"""
