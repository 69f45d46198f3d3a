"""The run lifecycle: everything ``python -m training train`` does around the network.

The request and its pre-flight checks (``start``), the run folder (``setup``, ``lock``,
``ownership``, ``checks``), ONE training step (``step.train_step``) driven by one loop
(``loop.run_steps``: ``loop.train`` for one seed, ``batched_loop`` for K seeds at once),
checkpoints and resuming (``checkpoints``, ``resume``), torchrun (``distributed``),
``torch.compile`` (``compile``), recipes and presets, the run's own files (``metrics``,
``model_card``, ``hf_files``), its notes on stderr (``notes``) and the commands (``cli``); the
speed benches in ``bench``, which time that same step.

May import ``training.model`` (the network), ``training.tasks`` and ``theory``; nothing in
``training.model`` imports this package.
"""
