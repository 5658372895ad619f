"""Compare two folders of result files run by run: are the numbers bit-identical?

    python lab/tools/compare_results.py BEFORE_DIR AFTER_DIR

Runs are matched by (method, scenario, seed, method arguments), not by file name, so folders written by code with
different run-id schemes compare. For each pair it checks the per-task accuracy log and, per task, the epochs
trained, the stopping epoch, the best validation loss and Horde's growth decisions. Prints one line per difference
and a summary; exits 1 if any run differs or is missing on one side. Used to show that a refactor changes no number.

A folder to compare comes from each checkout (`git worktree add`) running the miniature main plan on one thread:

    PYTHONPATH=CHECKOUT python -c "import sys, torch; torch.set_num_threads(1); \
      from horde_nb.paper.results import main_plan, miniature, plan_specs; from horde_nb.runs.sweep import sweep; \
      print(sweep(plan_specs(main_plan(seeds=(0,), shrink=miniature)), sys.argv[1])[1])" OUT_DIR

(Against code from before issue 12, replace `miniature` by a shrink that also sets the old validation settings,
`val_batches='large'` and `val_draws='fixed'`, which issue 12 changed on purpose.)
"""
import glob, json, sys


def _key(r):
    s = r['spec']
    return s['method'], s['scenario'], s['seed'], json.dumps(s.get('method_kw') or {}, sort_keys=True)


def _load(folder):
    return {_key(r): r for r in (json.load(open(f)) for f in sorted(glob.glob(f'{folder}/*.json')) if not f.endswith('sweep.json'))}


def _fits(r):
    return [{k: f[k] for k in ('epochs', 'stopped', 'best_loss', 'growth') if k in f} for f in r['fits']]


def main(a, b):
    ra, rb = _load(a), _load(b)
    same = 0
    for k in sorted(set(ra) | set(rb)):
        if k not in ra or k not in rb: print('only in', a if k in ra else b, k); continue
        x, y = ra[k], rb[k]
        if x['metric_log'] == y['metric_log'] and _fits(x) == _fits(y): same += 1; continue
        what = 'accuracies' if x['metric_log'] != y['metric_log'] else 'validation losses / epochs'
        print(f"differs ({what}): {k[0]} {k[1]} seed {k[2]} {k[3]}  Avg A {x['avg_acc']:.4f} vs {y['avg_acc']:.4f}")
    n = len(set(ra) | set(rb))
    print(f"{same} of {n} runs bit-identical")
    return same == n


if __name__ == '__main__':
    if len(sys.argv) != 3: sys.exit(__doc__)
    sys.exit(0 if main(*sys.argv[1:]) else 1)
