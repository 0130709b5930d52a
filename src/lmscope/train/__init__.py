"""One trainer for every model family lmscope trains.

    from lmscope.train import TrainConfig, train
    result = train(TrainConfig(data="shakespeare", tokenizer="char", iters=2000, out="runs/sc"))
    result.final_val_loss            # about 1.9 with these (nanoGPT's CPU) settings
    lmscope.load("runs/sc")          # the checkpoint folder is a model folder too

What one optimizer step does: for each of ``accum`` micro-batches, draw (x, y) from the batch
source, run the model forward (autocast to bfloat16 if asked), backpropagate loss / accum;
then clip the gradient norm, set the learning rate (linear warm-up, cosine decay to
``min_lr``) and step the optimizer (AdamW, Adam or RMSprop; weight decay on matrices only).
Every ``eval_every`` steps it averages the loss over a fixed set of ``eval_iters`` train and
val batches, prints a sample every ``sample_every`` steps, and writes a checkpoint
(``lmscope.formats.checkpoints``: safetensors + JSON, atomic, never pickled). A NaN or infinite loss
stops the run and leaves the last good checkpoint in place.

The model protocol (``adapters.ModelAdapter``): the trainer knows a model family only through
an adapter registered under its ``arch`` name:

    forward(net, x, targets, state) -> (logits, loss, state)   # one chunk
    initial_state(model, batch, device) / detach_state(state)  # for stateful models
    model_config(cfg, vocab_size) -> dict; build(config) -> nn.Module; config_of(model) -> dict
    sample(model, tokenizer, prompt_ids, length, seed) -> str | None
    stateful: bool; default_batches: "random" | "stream"

The weights are the module's own ``state_dict`` and the config a JSON dict, so any family's
checkpoint has the same shape. GPTs (``GPTAdapter``) are stateless and see random windows.
A char-RNN/LSTM/GRU adapter sets ``stateful = True`` and ``default_batches = "stream"``: the
trainer then reads ``StreamBatches`` (contiguous streams, one per batch row), carries the
hidden state from chunk to chunk, detaches it after each chunk (truncated BPTT), resets it
when the streams restart (``Batch.new_epoch``) and stores it in checkpoints so a resumed run
continues mid-epoch. ``--optimizer rmsprop|adam`` and a constant or decaying learning rate
(``min_lr``) cover the classic char-rnn recipes. ``lmscope.train.adapters`` holds the
adapters for "gpt", "rnn", "lstm" and "gru"; register another family with ``register_arch``.

Samples over training: ``sample_at=[100, 300, 1000]`` (``--sample-at``) draws a sample with the
run's own seed and prime at those iterations and keeps them in the checkpoint folder as
``timeline.json`` and ``timeline.md`` (``lmscope.train.timeline``), for any family.

The batch sources (``batches.make_batches``): "random" windows or "stream" chunks; both yield
``Batch(x, y, new_epoch)`` and save their position as JSON, so resuming draws the very same
batches. Resuming restores weights, optimizer state, batch position, the torch/numpy/Python
generators and the carried state, so on a CPU the resumed run's losses match an uninterrupted
run's exactly.

Distributed: started by ``torchrun``, every process runs the same loop under DDP (NCCL on CUDA,
gloo on CPU), draws its own batches and averages gradients; rank 0 alone logs and writes.
"""

from __future__ import annotations

from lmscope.lazy import lazy_names

# Where each name of ``from lmscope.train import ...`` lives. Modules load on first use, so
# ``lmscope.train.config`` (all that ``lmscope --help`` reads) comes without PyTorch.
_EXPORTS = {
    "ARCHS": "adapters",
    "GPTAdapter": "adapters",
    "ModelAdapter": "adapters",
    "get_adapter": "adapters",
    "register_arch": "adapters",
    "Batch": "batches",
    "BatchSource": "batches",
    "eval_batches": "batches",
    "make_batches": "batches",
    "FIXED_ON_RESUME": "config",
    "TrainConfig": "config",
    "parse_tokenizer_spec": "config",
    "StepInfo": "loop",
    "Trainer": "loop",
    "TrainingDiverged": "loop",
    "TrainResult": "loop",
    "resolve_device": "loop",
    "resume_config": "loop",
    "train": "loop",
    "lr_at": "optim",
    "make_optimizer": "optim",
    "param_groups": "optim",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(
    __name__, {name: f"{__name__}.{module}" for name, module in _EXPORTS.items()}
)
