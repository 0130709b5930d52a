#!/usr/bin/env bash
# Reproduces lmscope's shipped default model, src/lmscope/assets/models/shakespeare
# (see its MODEL_CARD.md). One thread per process: on a shared 2-core machine torch's thread
# pool otherwise fights other jobs for the cores.
#   bash scripts/train_default_model.sh [RUN_DIR]
set -euo pipefail
run=${1:-runs/shakespeare}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
lmscope train --data shakespeare --tokenizer bpe:2048 --layers 4 --heads 6 --dim 192 \
  --context 256 --batch 8 --iters 1600 --lr 1e-3 --min-lr 1e-4 --warmup 100 \
  --dropout 0.1 --weight-decay 0.1 --beta2 0.99 --grad-clip 1.0 \
  --eval-every 250 --eval-iters 40 --sample-every 500 --seed 1337 \
  --out "$run" --no-progress
# export replaces the folder whole; keep the model card across it
card=$(mktemp)
cp src/lmscope/assets/models/shakespeare/MODEL_CARD.md "$card"
lmscope export "$run" src/lmscope/assets/models/shakespeare --dtype float16 --name shakespeare
cp "$card" src/lmscope/assets/models/shakespeare/MODEL_CARD.md
