"""Where a run's wall time goes, per method family: one short real-data run of each (CIFAR-100, 20 classes, CIL
10 + 2×5, Slim ResNet-18 of width 20, at most 3 epochs per task), split into training epochs, validation passes,
the method's own passes (prototype statistics, importance, exemplar selection, FE growth, AugMix features...) and
evaluation, from the per-task timings every result file records.

    python lab/benchmarks/time_split.py [--data-dir ../shared/data/cifar100] [--methods ft,ewc,lwf,wa,pass,ssre,fetril,horde_m]

A benchmark, not a test: it prints figures and asserts nothing.
"""
import argparse, tempfile

from horde_nb.data.paths import shared_path
from horde_nb.runs.spec import RunSpec
from horde_nb.runs.runner import experiment
from horde_nb.methods.catalogue import METHODS
from horde_nb.train.config import TrainConfig


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--data-dir', default=str(shared_path('data/cifar100')))
    p.add_argument('--methods', default='ft,ewc,lwf,wa,pass,ssre,fetril,horde_m', help="one per family by default")
    p.add_argument('--epochs', type=int, default=3)
    a = p.parse_args()
    print(f"{'method':<9}{'family':<15}{'train':>8}{'valid.':>8}{'method':>8}{'eval':>8}{'total s':>9}   (shares of the total)")
    out = tempfile.mkdtemp()
    for m in a.methods.split(','):
        spec = RunSpec(m, 'cil', 0, data_dir=a.data_dir, n_classes=20, train_per_class=100, test_per_class=50, arch='slim',
                       scenario_kw=dict(n_tasks=3, n_start_classes=10),
                       train=TrainConfig(max_epochs=a.epochs, patience=3, device='cpu', progress=False))
        rec = experiment(spec, out)
        t = {k: sum(x[k] for x in rec['times']) for k in ('fit_train_s', 'fit_val_s', 'other_s', 'eval_s')}
        total = sum(t.values())
        shares = '  '.join(f"{100 * v / total:3.0f}%" for v in t.values())
        print(f"{m:<9}{METHODS[m].family:<15}{t['fit_train_s']:>8.1f}{t['fit_val_s']:>8.1f}{t['other_s']:>8.1f}"
              f"{t['eval_s']:>8.1f}{total:>9.1f}   {shares}")


if __name__ == '__main__':
    main()
