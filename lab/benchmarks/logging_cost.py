"""What `--log tensorboard,csv` costs per epoch, and that it changes no number.

    python lab/benchmarks/logging_cost.py [--epochs 3] [--repeats 2]

The same short run (MAS, CIL 10 + 2×5 on synthetic 32×32 images, Slim ResNet-18 of width 20, one thread) without a
log and with both logs, alternately; per epoch the mean wall time of the fits (training + validation), and whether
the two runs' accuracies and validation losses are bit-identical. A benchmark: it prints figures and asserts nothing.
"""
import argparse, tempfile, time

import torch

from horde_nb.runs.spec import RunSpec

from horde_nb.runs.runner import experiment
from horde_nb.train.config import TrainConfig


def one(log, epochs, folder):
    spec = RunSpec('mas', 'cil', 0, data='synthetic', n_classes=20, train_per_class=100, test_per_class=20, arch='slim',
                   scenario_kw=dict(n_tasks=3, n_start_classes=10),
                   train=TrainConfig(max_epochs=epochs, patience=epochs, device='cpu', progress=False, log=log))
    rec = experiment(spec, folder)
    n = sum(f['epochs'] for f in rec['fits'])
    return sum(t['fit_train_s'] + t['fit_val_s'] for t in rec['times']) / n, n, rec


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--epochs', type=int, default=3); p.add_argument('--repeats', type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(1)
    per, recs = {'': [], 'tensorboard,csv': []}, {}
    for _ in range(a.repeats):
        for log in per:
            s, n, recs[log] = one(log, a.epochs, tempfile.mkdtemp())
            per[log].append(s)
    same = recs['']['metric_log'] == recs['tensorboard,csv']['metric_log'] and recs['']['fits'] == recs['tensorboard,csv']['fits']
    off, on = min(per['']), min(per['tensorboard,csv'])
    print(f"# logging cost, MAS on 20 synthetic classes, Slim ResNet-18 (width 20), 1 thread, {n} epochs a run, best of {a.repeats}")
    print(f"no log:            {off:.3f} s an epoch")
    print(f"tensorboard + csv: {on:.3f} s an epoch ({1e3 * (on - off):+.1f} ms, {100 * (on - off) / off:+.1f}%)")
    print(f"numbers bit-identical with and without the log: {same}")


if __name__ == '__main__':
    main()
