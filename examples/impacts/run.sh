#!/usr/bin/env bash
# Paper D in two commands: simulate a thrown ellipse seen by a 240 fps camera, then identify its
# inertia-to-mass ratio J/m and the Coulomb friction coefficient from the noisy poses alone.
# Run from anywhere: outputs (poses.csv, fit/) go next to this script, or into the folder given
# as the first argument.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
mkdir -p "$out"
cd "$out"

physid impacts simulate \
    --shape ellipse:0.05,0.025 --surface line:0,0 \
    --q0 0,0.1,-0.785 --v0 3,-5,0 \
    --mu 0.4 --restitution 0.2 --inertia-ratio 756e-6 \
    --duration 0.3 --fps 240 --noise 0.001 --seed 1 \
    --out poses.csv

physid impacts identify \
    --data poses.csv \
    --shape ellipse:0.05,0.025 --surface line:0,0 \
    --mass 0.064 --noise 0.001 \
    --out fit
