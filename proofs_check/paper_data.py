"""Numbers and examples printed in the paper (arXiv 2605.31558), transcribed once.

Checks and tests read these; nothing here is computed.
"""

# Worked examples: (where, task, input tokens, printed answer, printed hop count or None)
WORKED_EXAMPLES = [
    ("Figure 1, number task", "number", "C B A 1 4 1 3 2 1", "C", 4),
    ("Figure 1, letter task", "letter", "C2 B1 A3 FA EC DE HF GD IG", "C2", 4),
    ("Figure 3A (a 4-hop example)", "number", "n h n v h y r s 6 3 2 7 7 8 4 7 2", "n", 4),
    ("Figure 3B", "letter", "e1 b2 e1 g6 a2 b2 e1 g6 be db ca ge eb hc dg fh eh", "a2", None),
    ("Table 2, number example 1", "number", "a z b y c x d w 5", "y", 1),
    ("Table 2, number example 2", "number", "v t k g n k o h m p 4", "o", 1),
    ("Table 2, number example 3", "number", "w y b c v t r i p p 10", "w", 1),
    ("Table 2, letter example 1", "letter", "a4 b3 c2 d1 fc", "c2", 1),
    ("Table 2, letter example 2", "letter", "w9 t7 l5 g1 n4 l6 u9 k7 m5 p8 gk", "k7", 1),
    ("Table 2, letter example 3", "letter", "q5 r7 x4 t7 f4 k7 q4 u2 u3 r5 ex", "x4", 1),
]

# Figures 3C and 3D: Index (resp. Retrieval) applied `depth + 1` times to the input.
# The printed row "Depth 0" is one application; rows past Depth 3 repeat Depth 3.
DEPTH_ROWS = {
    "number": ("C B A 1 4 1 3 2 1", [
        "C B A A C 1 3 2 1",
        "C B A A C C A 2 1",
        "C B A A C C A C 1",
        "C B A A C C A C C",
        "C B A A C C A C C",
    ]),
    "letter": ("C2 B1 A3 FA EC DE HF GD IG", [
        "C2 B1 A3 A3 C2 EC FA DE GD",
        "C2 B1 A3 A3 C2 C2 A3 EC DE",
        "C2 B1 A3 A3 C2 C2 A3 C2 EC",
        "C2 B1 A3 A3 C2 C2 A3 C2 C2",
        "C2 B1 A3 A3 C2 C2 A3 C2 C2",
    ]),
}

# Table 1: the weighted-average frequency ID per layer and the frequency printed beside it.
TABLE1 = {
    "number": [(1, "1.0000"), (2, "0.8660"), (2, "0.8660"), (2, "0.8660"), (10, "0.2738"),
               (39, "0.0042"), (38, "0.0049"), (38, "0.0049"), (38, "0.0049"), (37, "0.0056"),
               (37, "0.0056"), (38, "0.0049")],
    "letter": [(18, "0.0866"), (32, "0.0115"), (42, "0.0027"), (37, "0.0056"), (40, "0.0037"),
               (38, "0.0049"), (41, "0.0032"), (38, "0.0049"), (41, "0.0032"), (39, "0.0042"),
               (38, "0.0049"), (40, "0.0037")],
}
TABLE1_HEAD_DIM = 128
TABLE1_BASE = 10000
