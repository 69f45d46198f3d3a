"""Number and letter multi-hop tasks, the GPT-J model, training and trained-weights analysis."""
