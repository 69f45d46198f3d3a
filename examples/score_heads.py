"""Score every attention head of a local pretrained RoPE model (an HF folder or a .gguf file)
on one of the paper's tasks, from Python (``training.api``):

    python examples/score_heads.py PATH [number|letter]
"""

import sys

from training.api import analyze_heads, load_model

model = load_model(sys.argv[1])
heads = analyze_heads(model, task=sys.argv[2] if len(sys.argv) > 2 else "number", n_inputs=20)
for h in heads:
    print(
        f"layer {h.layer:2d} head {h.head:2d}  {h.head_class:10s} s_POS {h.positional:.3f} "
        f"s_SYM {h.symbolic:.3f}  plane {h.dominant_plane} ({h.angle_per_token:.3g} rad/token)"
    )
