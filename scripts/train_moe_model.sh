#!/usr/bin/env bash
# Reproduces lmscope's shipped mixture of experts, src/lmscope/assets/models/shakespeare-moe
# (see its MODEL_CARD.md), then measures which characters go to which expert.
#   bash scripts/train_moe_model.sh [RUN_DIR]
set -euo pipefail
run=${1:-runs/shakespeare-moe}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
lmscope train --arch moe --data shakespeare --tokenizer char --layers 3 --heads 4 --dim 128 \
  --context 64 --batch 12 --experts 4 --experts-used 2 --iters 1500 --lr 2e-3 --min-lr 2e-4 \
  --warmup 100 --eval-every 250 --eval-iters 20 --sample-every 500 \
  --sample-at 0,250,500,1000,1500 --seed 1337 --out "$run" --no-progress
# export replaces the folder whole; keep the model card across it
folder=src/lmscope/assets/models/shakespeare-moe
card=$(mktemp)
if [ -f "$folder/MODEL_CARD.md" ]; then cp "$folder/MODEL_CARD.md" "$card"; fi
lmscope export "$run" "$folder" --dtype float16 --name shakespeare-moe
if [ -s "$card" ]; then cp "$card" "$folder/MODEL_CARD.md"; fi
cp "$run/timeline.json" "$run/timeline.md" "$folder/"  # the samples over training
python scripts/moe_routing.py shakespeare-moe
