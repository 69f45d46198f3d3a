"""Training-speed benches: our GPT-J against HF's (``hf_compare``), and K seeds at once
eager and compiled (``k_table``).  Both time the one training step of ``training.run.step``."""
