#!/usr/bin/env bash
# Write the figures and tables of figures/ (the only command that writes there): runs the notebooks that draw them
# with HORDE_FIGURES=1, which points `figure_path`, `save_figure` and `save_table` at figures/ (nbs/00, nbs/11).
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository root
for nb in 00_data 00d_augment 01_scenarios 11_results_main 12_results_figures 13_ablations; do
  HORDE_FIGURES=1 nbdev_test --path "nbs/$nb.ipynb"
done
git status --short -- figures
