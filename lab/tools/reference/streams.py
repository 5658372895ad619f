#!/usr/bin/env python
"""Reference vectors of every repetition stream, from each origin's unmodified code (nbs/01_scenarios/00_base, nbs/01_scenarios/01_streams).

    python lab/tools/reference/streams.py --theirs PATH/cvww_cir_horde --hemati PATH/CIR \
        [--clvision PATH/clvision-challenge-2023] [--data-dir CIFAR100_DIR] [--out nbs/golden/streams.json]

No file of theirs is copied: their modules are imported from the given folders. What stands in for their surroundings:
- the authors' loaders (`src/scenarios/*.py: Scenario_Loader`) read CIFAR-100 through their torchvision reader, which
  returns our training labels with images that carry their own canonical index in their first pixel, so every image
  their loaders put in a task or the validation split names the index it came from; they run as their
  main_incremental.py runs them: `utils.seed_everything(seed)`, the class, `split_loaders()`;
- Hemati et al.'s generators (`cir/benchmarks/cir_*_based.py`) import Avalanche 0.4 for their containers only: stub
  modules record which indices each experience holds (`AvalancheSubset`, `AvalancheConcatDataset`,
  `classification_subset`, `dataset_benchmark`); torchvision's transforms are real. Before each call the global
  `random`, numpy and torch generators are seeded with the case's seed (their `random` and `fixed-dual` recurrence laws
  read the global generators, which their generator never seeds).
Cases run on the real CIFAR-100 labels when --data-dir holds them, and on small label sets (few classes, many tasks) where
the rarely taken branches fire. Each case stores the count table, task lengths, class order and SHA-256 digests of the
validation and task indices (int64): the product's notebooks compare make_scenario with them.
"""
from __future__ import annotations
import argparse, hashlib, importlib, json, random, sys, types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))  # the repository, for horde_nb
from lab.tools.reference.run_reference import their_src, their_commit  # noqa: E402


def digest(a) -> str: return hashlib.sha256(np.ascontiguousarray(a, dtype=np.int64).tobytes()).hexdigest()


def small_labels(n_classes:int, per_class:int, seed:int=5) -> np.ndarray:
    "A small label set in a shuffled order (classes interleaved, as in a real data set)."
    return np.random.RandomState(seed).permutation(np.repeat(np.arange(n_classes), per_class))


# --- the authors' loaders ---------------------------------------------------------------------------------------
def indexed_images(labels) -> np.ndarray:
    "uint8 [N, 32, 32, 3] images whose first pixel spells their own index (base 256)."
    n = len(labels)
    x = np.zeros((n, 32, 32, 3), np.uint8)
    i = np.arange(n)
    x[:, 0, 0, 0], x[:, 0, 0, 1], x[:, 0, 0, 2] = i >> 16, (i >> 8) & 255, i & 255
    return x

def index_of(images) -> np.ndarray:
    p = np.asarray(images)[:, 0, 0, :].astype(np.int64)
    return (p[:, 0] << 16) | (p[:, 1] << 8) | p[:, 2]

def authors_case(code:Path, module:str, labels, seed:int, n_tasks:int, flags:list) -> dict:
    "Run one of their loaders the way their main does; return what the stream is made of."
    import torch
    with their_src(code):
        import datasets.data_loader as dl, utils
        splits = {True: (indexed_images(labels), labels), False: (indexed_images(labels[:10]), labels[:10])}
        class Indexed:  # their torchvision reader, returning our labels and self-indexing images
            def __init__(self, root, train=True, download=False, **kw): self.data, self.targets = splits[train][0], splits[train][1].tolist()
        dl.TorchVisionCIFAR100 = Indexed
        Loader = importlib.import_module(f'scenarios.{module}').Scenario_Loader
        extra = vars(Loader.extra_parser(flags)[0])
        utils.seed_everything(seed=seed)
        loaders = Loader(['cifar100_il2a'], 0.1, n_tasks, 64, 0, False, **extra)
        loaders.split_loaders()
        trn = loaders.total_trn_loader.dataset
        table = np.asarray(loaders._scenario_samples).astype(np.int64)
        tasks = [index_of(trn.images[np.asarray(loaders.get_trn_loader(t).dataset.indices, dtype=np.int64)]) for t in range(n_tasks)]
        pool = np.asarray(loaders.num_samples_map_train, dtype=np.int64)
        order = np.full(table.shape[0], -1)
        for t, idx in enumerate(tasks):  # a task holds its classes in ascending permuted label, min(count, pool) images each
            ks = np.flatnonzero(table[:, t])
            starts = np.concatenate([[0], np.cumsum(np.minimum(table[ks, t], pool[ks]))[:-1]])
            order[ks] = labels[idx[starts]]
        val = index_of(loaders.total_val_loader.dataset.images)
        for m in [m for m in sys.modules if m.split('.')[0] in ('scenarios', 'datasets', 'utils')]: del sys.modules[m]
    return record(table, tasks, val, order)


def record(table, tasks, val, order) -> dict:
    flat = np.concatenate(tasks) if tasks else np.zeros(0, np.int64)
    return dict(table=np.asarray(table).astype(int).tolist(), task_lengths=[len(t) for t in tasks],
                class_order=[int(c) for c in order], val_sha256=digest(val), tasks_sha256=digest(flat),
                first_indices=[int(i) for i in flat[:20]])


# --- Hemati et al. -----------------------------------------------------------------------------------------------
class Part:
    "A stand-in for an Avalanche data set: the training-set indices it holds, in order, and their targets."
    def __init__(self, base, idx): self.base, self.indices = base, [int(i) for i in idx]
    @property
    def targets(self): return [self.base.targets[i] for i in self.indices]
    def __len__(self): return len(self.indices)

def stub_avalanche():
    "Avalanche 0.4's names that their generator files import, as recording stand-ins."
    def concat(parts):
        p = Part(parts[0].base, []); p.indices = [i for q in parts for i in q.indices]
        return p
    class Exp:
        def __init__(self, ds): self.dataset, self.classes_in_this_experience = ds, sorted(set(ds.targets))
    def benchmark(train_datasets, test_datasets, **_): return types.SimpleNamespace(train_stream=[Exp(d) for d in train_datasets])
    names = {'avalanche': {}, 'avalanche.benchmarks': dict(dataset_benchmark=benchmark),
             'avalanche.benchmarks.utils': dict(AvalancheDataset=Part, AvalancheSubset=Part, AvalancheConcatDataset=concat),
             'avalanche.benchmarks.utils.classification_dataset': dict(classification_subset=lambda base, indices: Part(base, indices)),
             'avalanche.benchmarks.datasets': dict(CIFAR100=None, MNIST=None, TinyImagenet=None, MiniImageNetDataset=None)}
    for name, attrs in names.items():
        m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m

def seed_all(seed):
    import torch
    random.seed(seed); np.random.seed(seed); torch.manual_seed(seed)

def hemati_case(repo:Path, kind:str, labels, seed:int, **kw) -> dict:
    "One stream of their unmodified generator on a training set with these labels (no validation split: theirs has none)."
    stub_avalanche()
    sys.path.insert(0, str(repo))
    try:
        train = types.SimpleNamespace(targets=[int(c) for c in labels])
        seed_all(seed)
        if kind == 'hemati_slot':
            from cir.benchmarks.cir_slot_based import cir_slot_based
            b = cir_slot_based(train, None, kw['n_tasks'], kw['K'], seed=seed)
        else:
            from cir.benchmarks.cir_sampling_based import cir_generator
            b = cir_generator(train, None, kw['n_tasks'], kw['s_e'], kw['dist_first_occurrence'], kw['dist_recurrence'], seed=seed)
    finally: sys.path.remove(str(repo))
    tasks = [np.array(e.dataset.indices, dtype=np.int64) for e in b.train_stream]
    table = np.zeros((int(labels.max()) + 1, len(tasks)), np.int64)
    for t, idx in enumerate(tasks): np.add.at(table[:, t], labels[idx], 1)
    return record(table, tasks, np.zeros(0, np.int64), np.arange(table.shape[0]))


# --- the cases ----------------------------------------------------------------------------------------------------
GEO, FIX = {'dist_type': 'geometric', 'p': 0.01}, {'dist_type': 'fixed', 'p': 0.2}
def hemati_cases(cifar) -> list:
    "(name, labels name, kind, seed, make_scenario arguments)"
    small = [('small', 'hemati_slot', s, dict(n_tasks=n, K=k)) for s, n, k in ((0, 9, 2), (1, 12, 5), (2, 7, 6), (3, 30, 4))]
    small += [('small', 'hemati_sampling', s, dict(n_tasks=n, s_e=se, dist_first_occurrence=f, dist_recurrence=r)) for s, n, se, f, r in (
        (0, 40, 30, {'dist_type': 'geometric', 'p': 0.2}, {'dist_type': 'fixed', 'p': 0.3}),
        (1, 25, 24, {'dist_type': 'uniform'}, {'dist_type': 'zipf', 'exponent': 1.0}),
        (2, 30, 19, {'dist_type': 'poisson', 'mu': 4.0}, {'dist_type': 'poisson', 'mu': 2.0}),
        (3, 20, 50, {'dist_type': 'zipf_reversed', 'exponent': 1.5}, {'dist_type': 'random'}),
        (4, 60, 12, {'dist_type': 'uniform_alpha', 'alpha': 0.5}, {'dist_type': 'fixed-dual', 'frac': 0.5, 'p_l': 0.1, 'p_h': 0.9}),
        (5, 30, 20, {'dist_type': 'zipf', 'exponent': 1.0}, {'dist_type': 'fixed', 'p': 0.0}),  # p = 0: empty experiences dropped
        (6, 25, 20, {'dist_type': 'uniform_alpha', 'alpha': 0.3}, {'dist_type': 'fixed', 'p': 0.3}))]  # alpha × tasks = 7.5: rounded up
    # tasks × K not a multiple of the classes: some classes get one slot more (28 = 4 × 6 + 4, 65 = 10 × 6 + 5)
    small += [('small', 'hemati_slot', s, dict(n_tasks=n, K=k)) for s, n, k in ((4, 7, 4), (5, 13, 5))]
    big = [('cifar100', 'hemati_slot', 0, dict(n_tasks=50, K=2)), ('cifar100', 'hemati_slot', 1, dict(n_tasks=20, K=5)),
           ('cifar100', 'hemati_slot', 0, dict(n_tasks=10, K=100)),
           ('cifar100', 'hemati_sampling', 0, dict(n_tasks=200, s_e=500, dist_first_occurrence=GEO, dist_recurrence=FIX)),
           ('cifar100', 'hemati_sampling', 1, dict(n_tasks=50, s_e=2000, dist_first_occurrence={'dist_type': 'uniform'},
                                                   dist_recurrence={'dist_type': 'zipf', 'exponent': 1.0}))]
    return small + (big if cifar is not None else [])

def with_nexp(path:Path) -> Path:
    "A copy of a challenge config with the key their converter reads ('nexp'); the published files call it 'n_e'."
    import pickle
    d = pickle.loads(path.read_bytes())
    out = Path('/tmp') / f'horde_streams_{path.name}'
    out.write_bytes(pickle.dumps({**d, 'nexp': d['n_e']}))
    return out

# (labels, kind, their module, seed, n_tasks, their flags, our arguments)
def authors_cases(cifar, clvision:Path|None) -> list:
    small = [('small', 'efcir_u', 'cir_constant_probability', s, n, ['--num-start-classes', '3', '--num-start-samples', '10', '--imgs-per-task', str(i), '--reoccurence-prob', str(p)],
              dict(n_start_classes=3, n_start_samples=10, imgs_per_task=i, p=p)) for s, n, i, p in ((0, 30, 20, 0.15), (1, 40, 13, 0.1), (2, 25, 30, 0.2))]
    # EFCIR-B and random frequency on 6 classes: their empty-task redraw runs (and fails, see nbs/01_scenarios/01_streams); on 20 classes with
    # probabilities near 0.5 no task is empty and the table is theirs
    small += [('small', 'efcir_b', 'cir_beta_frequency', 0, 40, ['--num-start-classes', '3', '--num-start-samples', '10', '--imgs-per-task', '20'],
               dict(n_start_classes=3, n_start_samples=10, imgs_per_task=20))]
    small += [('small20', 'efcir_b', 'cir_beta_frequency', s, n, ['--num-start-classes', '5', '--num-start-samples', '10', '--imgs-per-task', '40',
               '--reoccurrence-prob-p', '8', '--reoccurrence-prob-q', '8'], dict(n_start_classes=5, n_start_samples=10, imgs_per_task=40, beta_ab=[8, 8]))
              for s, n in ((0, 40), (3, 30))]
    small += [('small', 'cir_random_frequency', 'cir_random_frequency', 0, 30, ['--imgs-per-task', '20'], dict(imgs_per_task=20))]
    small += [('small20', 'cir_random_frequency', 'cir_random_frequency', s, n, f, a) for s, n, f, a in (
        (0, 30, ['--imgs-per-task', '20', '--reoccurrence-prob-min', '0.4'], dict(imgs_per_task=20, reoccurrence_prob_min=0.4)),
        (1, 30, ['--imgs-per-task', '17', '--reoccurrence-prob-min', '0.4', '--reoccurrence-prob-max', '0.7', '--num-start-classes', '4', '--num-start-samples', '12'],
         dict(imgs_per_task=17, reoccurrence_prob_min=0.4, reoccurrence_prob_max=0.7, n_start_classes=4, n_start_samples=12)))]
    small += [('small', 'cir_sample', 'cir_sample', s, n, ['--imgs-per-task', '20', '--geometric-discovery-p', str(g), '--class-reoccurrence', str(r)],
               dict(imgs_per_task=20, geometric_discovery_p=g, class_reoccurrence=r)) for s, n, g, r in ((0, 20, 0.5, 0.2), (2, 30, 0.3, 0.4))]  # a task no class reached: theirs fails
    small += [('small20', 'cir_sample', 'cir_sample', s, n, ['--imgs-per-task', '30', '--geometric-discovery-p', str(g), '--class-reoccurrence', str(r)],
               dict(imgs_per_task=30, geometric_discovery_p=g, class_reoccurrence=r)) for s, n, g, r in ((0, 8, 0.5, 0.2), (1, 12, 0.6, 0.5))]
    small += [('small', 'random_repetition', 'random_repetition', s, n, f, a) for s, n, f, a in (
        (0, 12, [], {}), (2, 12, [], {}), (1, 20, ['--class-presence', '0.3', '--low-thresh-normal', '0.2', '--high-thresh-normal', '0.6'],
                         dict(class_presence=0.3, low_thresh_normal=0.2, high_thresh_normal=0.6)))]
    big = [('cifar100', 'efcir_u', 'cir_constant_probability', 1, 100, ['--num-start-classes', '50', '--num-start-samples', '225'], {}),
           ('cifar100', 'efcir_b', 'cir_beta_frequency', 0, 100, ['--num-start-classes', '50', '--num-start-samples', '225'], {}),
           ('cifar100', 'efcir_b', 'cir_beta_frequency', 303, 100, ['--num-start-classes', '50', '--num-start-samples', '225'], {}),
           ('cifar100', 'cir_random_frequency', 'cir_random_frequency', 0, 100, [], {}),
           ('cifar100', 'cir_sample', 'cir_sample', 0, 10, [], {}),
           ('cifar100', 'random_repetition', 'random_repetition', 0, 10, [], {}),  # a class in no task: theirs fails
           ('cifar100', 'random_repetition', 'random_repetition', 1, 10, [], {})]
    if clvision is not None:
        big += [('cifar100', 'clvision23', 'challenge_converter', seed, n, ['--challenge-config', str(with_nexp(clvision / 'scenario_configs' / f'config_s{i}.pkl'))],
                 dict(config=f'config_s{i}.pkl')) for i, n, seed in ((1, 50, 0), (6, 49, 2))]
    return small + (big if cifar is not None else [])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--theirs', required=True, type=Path, help="a clone of Tsebeb/cvww_cir_horde")
    p.add_argument('--hemati', required=True, type=Path, help="a clone of HamedHemati/CIR")
    p.add_argument('--clvision', type=Path, help="a clone of ContinualAI/clvision-challenge-2023 (its scenario configs)")
    p.add_argument('--data-dir', help="CIFAR-100 (python version) for the full-size cases")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden' / 'streams.json')
    p.add_argument('--add', action='store_true', help="compute only the cases --out lacks and add them, keeping its others as they are")
    a = p.parse_args(argv)
    old = json.loads(a.out.read_text()) if a.add else dict(cases=[])
    have = {(c['labels'], c['kind'], c['seed'], json.dumps(c['kw'], sort_keys=True)) for c in old['cases']}
    new = lambda lab, kind, seed, kw: (lab, kind, seed, json.dumps(kw, sort_keys=True)) not in have
    from horde_nb.data.cifar100 import load_cifar100
    cifar = load_cifar100(a.data_dir)[0].y if a.data_dir else None
    label_sets = dict(small=small_labels(6, 30), small20=small_labels(20, 30), cifar100=cifar)
    cases = []
    for lab, kind, seed, kw in hemati_cases(cifar):
        if not new(lab, kind, seed, {**kw, 'val_fraction': 0}): continue
        rec = hemati_case(a.hemati, kind, label_sets[lab], seed, **kw)
        cases.append(dict(labels=lab, kind=kind, seed=seed, kw={**kw, 'val_fraction': 0}, origin='HamedHemati/CIR', **rec))
        print(f"{kind:22s} {lab:8s} seed {seed}: {len(rec['task_lengths'])} tasks", flush=True)
    for lab, kind, module, seed, n, flags, kw in authors_cases(cifar, a.clvision):
        if not new(lab, kind, seed, dict(n_tasks=n, **kw)): continue
        try: rec = authors_case(a.theirs, module, label_sets[lab], seed, n, flags)
        except Exception as e:  # their code fails on this case: the failure is the vector
            for m in [m for m in sys.modules if m.split('.')[0] in ('scenarios', 'datasets', 'utils')]: del sys.modules[m]
            rec = dict(error=f"{type(e).__name__}: {str(e).splitlines()[0]}")
        cases.append(dict(labels=lab, kind=kind, seed=seed, kw=dict(n_tasks=n, **kw), origin=f'Tsebeb/cvww_cir_horde src/scenarios/{module}.py', **rec))
        print(f"{kind:22s} {lab:8s} seed {seed}: {rec.get('error') or f'{n} tasks'}", flush=True)
    meta = dict(small='np.random.RandomState(5).permutation(np.repeat(np.arange(6), 30))',
                small20='np.random.RandomState(5).permutation(np.repeat(np.arange(20), 30))',
                cifar100='canonical CIFAR-100 training labels' if cifar is not None else None,
                commits={'Tsebeb/cvww_cir_horde': their_commit(a.theirs), 'HamedHemati/CIR': their_commit(a.hemati)},
                command='python lab/tools/reference/streams.py --theirs THEIRS --hemati CIR --clvision CLVISION --data-dir CIFAR100')
    if a.add: meta = {**old['meta'], 'added': meta['commits']}
    a.out.write_text(json.dumps(dict(meta=meta, cases=old['cases'] + cases)) + '\n')
    print(f"{len(cases)} cases {'added ' if a.add else ''}-> {a.out}")


if __name__ == '__main__': main()
