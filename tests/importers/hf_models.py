"""What the transformers-based checks share about their random models (torch needed):
norm weights and biases moved away from their initial ones and zeros, and position ids as
generate makes them from a left-padded mask."""

from __future__ import annotations

import torch


def randomize(model, seed: int) -> None:
    """1-D weights (norms, biases) away from their initial ones and zeros, so that a dropped
    scale or shift shows (an import would otherwise read them as literals)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn(p.shape, generator=g))


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids as generate makes them from a left-padded mask (transformers 5)."""
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
