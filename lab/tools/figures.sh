#!/usr/bin/env bash
# Write the figures and tables of figures/ (the only command that writes there): runs the notebooks that draw them
# with HORDE_FIGURES=1, which points `figure_path`, `save_figure` and `save_table` at figures/ (nbs/00_data/02_cifar100, nbs/07_paper/00_results).
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository root
for nb in 00_data/02_cifar100 00_data/05_augment 01_scenarios/00_base 07_paper/00_results 07_paper/02_plots 07_paper/03_ablations; do
  HORDE_FIGURES=1 nbdev_test --path "nbs/$nb.ipynb"
done
git status --short -- figures
