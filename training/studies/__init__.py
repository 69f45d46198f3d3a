"""Multi-seed studies (plans of tasks x seeds x recipe variants and the runner that executes
and collects them).  Empty until the study runner lands.

May import ``training.tasks``, ``training.model``, ``training.analysis`` and ``theory``.
"""
