"""The run lifecycle: everything ``python -m training train`` does around the network.

Pre-flight checks and the run folder (``setup``, ``lock``, ``ownership``, ``checks``), one
training step (``step``) driven by the loops (``loop`` for one seed, ``batched_loop`` for K seeds
at once), checkpoints and resuming (``checkpoints``, ``resume``), torchrun (``distributed``),
``torch.compile`` (``compile``), recipes and presets, the run's own files (``metrics``,
``model_card``, ``hf_files``) and the commands (``cli``); the speed benches in ``bench``.

May import ``training.model`` (the network), ``training.tasks`` and ``theory``; nothing in
``training.model`` imports this package.
"""
