"""The load-balancing loss that keeps a mixture of experts using all its experts.

Left alone, a router trained only on the language-modelling loss tends to send most tokens to
the one or two experts that happened to start best: they get the most gradient, improve
fastest and win ever more tokens, and the other experts never learn. The Switch Transformer
(Fedus, Zoph and Shazeer, 2021, eq. 4) adds, for each sparse block,

    balance = n_expert * sum over e of f_e * P_e

where ``f_e`` is the share of the batch's routing slots (token x chosen expert) that went to
expert e and ``P_e`` is the router's mean probability for e over the batch's tokens. It is 1
when both are spread evenly and grows to n_expert when every token goes to one expert. ``f_e``
is a count (no gradient); the gradient flows through ``P_e`` and lowers the probability of the
experts that are already busy. Top-k routing counts each of a token's k choices, as
transformers' Mixtral does.

``RouterTap`` collects every sparse block's router logits during one forward pass through
PyTorch forward hooks on the routers, so the model's own code (the explainer's) runs unchanged.
"""

from __future__ import annotations

import torch
from torch import nn

from lmscope.models.moe import SparseMoE

# The weight of the balance loss beside the language-modelling loss: the Switch Transformer's
# alpha (it found 1e-2 balanced experts without hurting quality).
BALANCE_WEIGHT = 0.01


def balance_loss(router_logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """The Switch Transformer's balance loss for one block's router logits ([..., n_expert])."""
    probs = torch.softmax(router_logits.float().reshape(-1, router_logits.shape[-1]), dim=-1)
    n_expert = probs.shape[-1]
    chosen = probs.topk(top_k, dim=-1).indices
    counts = torch.zeros(n_expert, device=probs.device).index_add_(
        0, chosen.reshape(-1), torch.ones(chosen.numel(), device=probs.device)
    )
    share = counts / chosen.numel()  # f_e: no gradient, a count
    return n_expert * (share * probs.mean(dim=0)).sum()


class RouterTap:
    """Within ``with RouterTap(net) as tap:``, ``tap.logits`` collects each sparse block's
    router logits (one tensor per block, in the order the blocks ran)."""

    def __init__(self, net: nn.Module):
        self.moes = [m for m in net.modules() if isinstance(m, SparseMoE)]
        self.logits: list[torch.Tensor] = []
        self._handles: list = []

    def __enter__(self) -> RouterTap:
        self.logits = []
        for moe in self.moes:
            self._handles.append(moe.gate.register_forward_hook(self._keep))
        return self

    def _keep(self, module, inputs, output) -> None:
        self.logits.append(output)

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def balance(self) -> torch.Tensor:
        """The mean balance loss over the blocks that ran (0 when none is sparse)."""
        if not self.logits:
            return torch.zeros(())
        top_k = self.moes[0].top_k
        return torch.stack([balance_loss(lg, top_k) for lg in self.logits]).mean()
