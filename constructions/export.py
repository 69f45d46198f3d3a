"""A construction exported as a one-layer model, the interface trained-model analysis uses.

Analysis needs, per layer, the hidden states entering it and the last token's attention
logits, and the logits recomputed from altered hidden states (the positional/symbolic swap
tests).  ``OneLayerModel`` gives exactly that for a ``constructions.common.Construction``,
through the construction's own matrix route.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.numbers import FLOAT64, NumberSystem

__all__ = ["LayerTrace", "OneLayerModel"]


@dataclass
class LayerTrace:
    """Per-layer quantities of one input (one entry per layer; here one layer)."""

    tokens: list
    hidden_states: list  # [array (n, d)] entering each layer
    last_token_logits: list  # [array (n,)] attention logits from the last token to every position
    values: list  # [array (n, d)] W_V applied to the hidden states


class OneLayerModel:
    """A construction seen as a one-layer model, as trained-model analysis sees a GPT-J layer.

    ``layer_logits(layer, hidden_states)`` recomputes the last token's logits from any hidden
    states with the positions unchanged: that is what a positional/symbolic swap test needs
    (it swaps hidden states between positions and re-runs only that layer's attention).
    """

    num_layers = 1

    def __init__(self, construction, numbers: NumberSystem = FLOAT64):
        # construction: a constructions.common.Construction.  Not imported here, since
        # common is a base this module must not depend on (no import cycle).
        self.construction = construction
        self.numbers = numbers

    def _check_layer(self, layer: int) -> None:
        if layer != 0:
            raise ValueError(f"layer {layer} does not exist: this model has one layer (layer 0)")

    def layer_logits(self, layer: int, hidden_states):
        """Last-token logits (n,) of ``layer`` recomputed from hidden states (n, d)."""
        self._check_layer(layer)
        hidden = np.asarray(hidden_states)
        last = hidden.shape[-2] - 1
        return self.construction.logits_from_hidden(hidden, self.numbers, rows=[last])[..., 0, :]

    layer_last_token_logits = layer_logits  # the name training.model.gptj.GPTJ uses

    def run(self, tokens) -> LayerTrace:
        """hidden_states, last_token_logits and values of one input, one entry per layer."""
        c = self.construction
        hidden = c.hidden(c.ids(tokens), self.numbers)
        values = hidden @ c.weights(self.numbers).value.T
        return LayerTrace(list(tokens), [hidden], [self.layer_logits(0, hidden)], [values])
