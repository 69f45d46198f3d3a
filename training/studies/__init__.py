"""Multi-seed studies: plans of tasks x seeds x recipe variants (``seeds.json``,
``variants.json``; format in ``plan``), the runner that executes each member's stages as
``python -m training`` commands (``runner``) and the collector of intervals (``collect``).

May import ``training.tasks``, ``training.model``, ``training.analysis`` and ``theory``.
"""
