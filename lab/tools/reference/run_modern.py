"""Run the authors' own trainers of two methods after the paper on our reduced protocol's data, and store their numbers as
our result files: SEED through `grypesc/SEED` (FACIL's `src/main_incremental.py`), FeCAM through `dipamgoswami/FeCAM`
(PyCIL's `trainer.py`).

    python lab/tools/reference/run_modern.py --method seed --code ~/src/SEED --data-dir ~/data/cifar100
    python lab/tools/reference/run_modern.py --method fecam --code ~/src/FeCAM --data-dir ~/data/cifar100

Their files stay unmodified on disk (none is in this repository). Each run is one process that calls their entry point
with the recipe of their CIFAR-100 scripts (SEED: `cifar10x10.sh`'s flags; FeCAM: `exps/FeCAM_cifar100.json`) on the
images, class order and networks of our `small` preset, its epoch cap in place of their epoch counts, and what they
compute read through wrappers. Every change is listed in the result (`reference.patches`):

- data: their CIFAR-100 reader returns our capped splits (100 training / 50 test images per class), and their class
  order is our scenario's; their recipes have no validation split (SEED `--use-test-as-val`; PyCIL none), so their
  tasks train on all 100 images of a class where ours hold 10 out for early stopping;
- network: their backbone factory builds our preset's network (Slim ResNet-18, 160-d features) behind their interface;
- epochs: `--nepochs`/`--ftepochs` (SEED) and `init_epochs` (FeCAM) are our cap; SEED's step schedules (milestones at
  60/120/160 of 200 and 30/60/80 of 100 epochs) are scaled to it, FeCAM's cosine schedule follows `init_epochs` itself;
- device: `.cuda()` is a no-op without a GPU (SEED), and PyCIL's `_set_device` (which never selects the CPU) gives the CPU;
- measurement: the per-class hits of their task-agnostic (SEED) or Mahalanobis (FeCAM) test predictions after each task.

Their other differences from our adaptation are theirs by design and are what the comparison shows: SGD with their
learning rates and weight decay, fixed epoch counts without early stopping, their augmentations (AutoAugment's CIFAR
policy; cutout for SEED), their own first-task training (ours is the study's shared first task) and, for FeCAM, their
cosine classifier during that training. No checkpoints: a run takes minutes, and an interrupted one starts again.
"""
from __future__ import annotations
import argparse, contextlib, dataclasses, datetime, json, os, sys, time
from pathlib import Path

if not __package__:  # run as a file: import the siblings as the package `tools.reference` (PEP 366)
    sys.path[0] = str(Path(__file__).resolve().parents[2]); __package__ = 'tools.reference'
from .run_reference import fail, their_commit, their_src, patch_cuda, device_label, stub_absent

RESULTS = Path('results') / 'reference' / 'small'
REPOSITORY = dict(seed='grypesc/SEED', fecam='dipamgoswami/FeCAM')
ENTRY = dict(seed='src/main_incremental.py', fecam='trainer.py')  # what a checkout must hold
SOURCE = dict(seed='src', fecam='.')  # where their code lies in it
SEED_FLAGS = ['--approach', 'seed', '--gmms', '1', '--max-experts', '5', '--use-multivariate', '--tau', '3',
              '--batch-size', '128', '--datasets', 'cifar100_icarl', '--lr', '0.05', '--weight-decay', '5e-4',
              '--clipping', '1', '--alpha', '0.99', '--use-test-as-val', '--network', 'resnet32', '--extra-aug', 'fetril',
              '--momentum', '0.9', '--num-workers', '0']  # their cifar10x10.sh, in-process loading
FECAM_ARGS = dict(prefix='train', dataset='cifar100', memory_size=0, shuffle=False, model_name='fecam', convnet_type='resnet18',
                  init_lr=0.1, init_weight_decay=5e-4, batch_size=128, num_workers=0, T=2, beta=0.5, alpha1=1, alpha2=1,
                  ncm=False, tukey=True, diagonal=False, per_class=True, full_cov=True, shrink=True, norm_cov=True)  # exps/FeCAM_cifar100.json


def checkout(method:str, path) -> Path:
    "Their checkout, once it is known to hold the entry point."
    if not path: fail(f"give --code PATH, a checkout of {REPOSITORY[method]}")
    p = Path(path).expanduser().resolve()
    if not (p / ENTRY[method]).is_file(): fail(f"{p} has no {ENTRY[method]}; give a checkout of {REPOSITORY[method]}")
    return p


def spec_of(method:str, seed:int, data_dir):
    "Our study's spec of this run (plan small_modern, CIL)."
    from horde_nb.paper.study import modern_study_plan
    (s,), = modern_study_plan(methods=(method,), scenarios=('cil',), seeds=(seed,)).values()
    return dataclasses.replace(s, data_dir=data_dir)


def their_order(scen) -> list:
    "Canonical classes in our label order: their class order, so that their labels are ours."
    import numpy as np
    return np.argsort(scen.label_map).tolist()


class Wrapped:
    "Our preset's network behind the interface their code calls; `kind` 'facil' or 'pycil'."
    @staticmethod
    def make(factory, kind:str):
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = factory(); self.out_dim = self.net.out_dim; self.fc = nn.Identity()
            def forward(self, x, return_features=False):
                f = self.net.features(x)
                if kind == 'pycil': return dict(fmaps=[], features=f)
                out = self.fc(f)
                return (out, f) if return_features else out
        return Net()


def run_seed(spec, scen, train, test, code:Path, logs:Path) -> tuple:
    "Their `main_incremental.main` on our data; (per task: [(hits, targets)] of the task-agnostic test, patches)."
    from horde_nb.train.registry import ARCHS
    E, hits = spec.train.max_epochs, []
    argv = SEED_FLAGS + ['--nepochs', E, '--ftepochs', E, '--num-tasks', scen.n_tasks, '--nc-first-task', len(scen.task_classes(0)),
                         '--seed', spec.seed, '--results-path', logs, '--exp-name', spec.run_id]
    with their_src(code):
        import datasets.data_loader as dl, datasets.dataset_config as dc, networks.network as nw, approach.seed as sd
        import approach.incremental_learning as il
        class Ours:
            def __init__(self, root, train=True, download=False, **kw):
                s = splits[train]; self.data, self.targets = s.x, s.y.tolist()
        splits = {True: train, False: test}
        dl.TorchVisionCIFAR100 = Ours
        dc.dataset_config['cifar100_icarl']['class_order'] = their_order(scen)
        init0 = nw.ExtractorEnsemble.__init__
        def init(self, *a, **k):
            init0(self, *a, **k)
            self.bb_fun = lambda num_classes, num_features: Wrapped.make(ARCHS[spec.arch]['main'], 'facil')
            self.num_features = ARCHS[spec.arch]['main']().out_dim
        nw.ExtractorEnsemble.__init__ = init
        opt0 = sd.Appr._get_optimizer
        def get_optimizer(self, num, wd, milestones=(60, 120, 160)):
            total = 200 if list(milestones) == [60, 120, 160] else 100  # their training and fine-tuning schedules
            return opt0(self, num, wd, milestones=[round(m * E / total) for m in milestones])
        sd.Appr._get_optimizer = get_optimizer
        metrics0, train0 = sd.Appr.calculate_metrics, il.Inc_Learning_Appr.train
        def metrics(self, features, targets, t):
            taw, tag = metrics0(self, features, targets, t)
            hits[-1].append((tag.bool().cpu(), targets.cpu())); return taw, tag
        def train_(self, t, *a, **k):
            train0(self, t, *a, **k); hits.append([])  # what follows, until the next task, is main's test of task t
        sd.Appr.calculate_metrics, il.Inc_Learning_Appr.train = metrics, train_
        patches = ["data: datasets.data_loader.TorchVisionCIFAR100 returns our splits; "
                   "datasets.dataset_config['cifar100_icarl']['class_order'] is our scenario's class order",
                   f"network: networks.network.ExtractorEnsemble's bb_fun builds our {spec.arch} preset's network",
                   f"epochs: --nepochs {E} --ftepochs {E} (theirs: 200, 100); approach.seed.Appr._get_optimizer's milestones scaled to {E}",
                   *patch_cuda(), "measurement: approach.seed.Appr.calculate_metrics's task-agnostic hits recorded after each task"]
        import main_incremental
        with open(logs / 'stdout.txt', 'w', buffering=1) as f, contextlib.redirect_stdout(f):
            main_incremental.main([str(a) for a in argv])
    return hits, patches, [str(a) for a in argv]


def run_fecam(spec, scen, train, test, code:Path, logs:Path) -> tuple:
    "Their `trainer._train` on our data; (per task: [(hits, targets)] of the Mahalanobis test, patches)."
    import torch
    from horde_nb.train.registry import ARCHS
    hits = []
    args = dict(FECAM_ARGS, init_cls=len(scen.task_classes(0)), increment=len(scen.task_classes(1)), seed=spec.seed,
                device=['0'], init_epochs=spec.train.max_epochs)
    stub_absent('timm')  # imported by utils/inc_net.py for its ViTs, which the CNN path never builds
    sys.path.insert(0, str(code))
    try:
        import trainer, utils.data as ud, utils.inc_net as inet, models.base as mb
        def download(self):
            self.train_data, self.train_targets, self.test_data, self.test_targets = train.x, train.y.copy(), test.x, test.y.copy()
        ud.iCIFAR100.download_data, ud.iCIFAR100.class_order = download, their_order(scen)
        inet.get_convnet = lambda args, pretrained=False: Wrapped.make(ARCHS[spec.arch]['main'], 'pycil')
        trainer._set_device = lambda a: a.update(device=[torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')])
        maha0 = mb.BaseLearner._eval_maha
        def maha(self, loader, *a, **k):
            pred, y = maha0(self, loader, *a, **k)
            hits.append([(torch.as_tensor(pred[:, 0] == y), torch.as_tensor(y))]); return pred, y
        mb.BaseLearner._eval_maha = maha
        patches = ["data: utils.data.iCIFAR100.download_data returns our splits; its class_order is our scenario's (shuffle false)",
                   f"network: utils.inc_net.get_convnet builds our {spec.arch} preset's network",
                   f"epochs: init_epochs {spec.train.max_epochs} (theirs: 200; the cosine schedule follows it)",
                   "device: trainer._set_device gives the CPU when no GPU is present (theirs always names cuda devices)",
                   "measurement: models.base.BaseLearner._eval_maha's top-1 hits recorded after each task"]
        cwd = os.getcwd(); os.chdir(logs)  # PyCIL writes its log under ./logs
        try:
            with open(logs / 'stdout.txt', 'w', buffering=1) as f, contextlib.redirect_stdout(f): trainer._train(args)
        finally: os.chdir(cwd)
    finally: sys.path.remove(str(code))
    return hits, patches, [f"{k}={v}" for k, v in args.items()]


RUN = dict(seed=run_seed, fecam=run_fecam)


def run_one(method:str, seed:int, code:Path, data_dir, results_dir:Path, threads:int, command:str) -> dict:
    "One run of their trainer on our spec's data; returns the stored record."
    import numpy as np, torch
    torch.set_num_threads(threads)
    from horde_nb.runs.spec import load_data, scenario_of, fingerprint
    from horde_nb.runs.runner import provenance
    from horde_nb.runs.store import clean_record, RunFiles
    from horde_nb.train.metrics import MetricLog
    spec = spec_of(method, seed, data_dir)
    out = RunFiles(spec, results_dir).result
    if out.exists(): print(f"{spec.run_id}: finished before, skipped", flush=True); return json.loads(out.read_text())
    train, test = load_data(spec)
    scen = scenario_of(spec, train)
    logs = (results_dir / 'logs' / spec.run_id).resolve(); logs.mkdir(parents=True, exist_ok=True)
    started, t0 = datetime.datetime.now().astimezone().isoformat(timespec='seconds'), time.perf_counter()
    print(f"== their {method} ({REPOSITORY[method]}) on {spec.scenario}, seed {spec.seed}, {threads} thread(s) [{spec.run_id}]", flush=True)
    hits, patches, argv = RUN[method](spec, scen, train, test, code, logs)
    hits = [h for h in hits if h]
    if len(hits) != scen.n_tasks: raise RuntimeError(f"recorded {len(hits)} evaluations for {scen.n_tasks} tasks")
    log, ys = MetricLog(), scen.label_map[test.y]
    for t, calls in enumerate(hits):
        hit, y = (torch.cat(v).numpy() for v in zip(*calls))
        n = scen.n_seen(t)
        want = np.bincount(ys[ys < n], minlength=n)
        if not np.array_equal(np.bincount(y, minlength=n), want): raise RuntimeError(f"task {t}: their test set is not our seen classes' test images")
        log.add(t, np.bincount(y[hit], minlength=n), want, n, scen.task_classes(t).tolist())
    record = dict(strategy=method, code='reference', acc=log.acc, avg_acc=log.avg_acc, avg_forgetting=log.avg_forgetting,
                  forgetting=log.forgetting, triangle=log.to_dict()['triangle'], metric_log=log.to_dict(),
                  spec=dataclasses.asdict(spec), run_id=spec.run_id, scenario_fingerprint=fingerprint(scen), threads=threads,
                  device=device_label(), provenance=provenance(command),
                  reference=dict(repository=REPOSITORY[method], commit=their_commit(code, SOURCE[method]),
                                 argv=argv, patches=patches),
                  started=started, finished=datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
                  wall_s=time.perf_counter() - t0, resumed=False)
    record = clean_record(record)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record)); os.replace(tmp, out)
    return record


def main(argv=None):
    p = argparse.ArgumentParser(prog='run_modern', description=__doc__.split('\n\n')[0])
    p.add_argument('--method', required=True, choices=sorted(RUN), help="whose trainer: seed (FACIL) or fecam (PyCIL)")
    p.add_argument('--code', help="checkout of the method's repository (grypesc/SEED or dipamgoswami/FeCAM)")
    p.add_argument('--seed', type=int, default=0, help="our scenario's seed (default 0)")
    p.add_argument('--data-dir', default=os.environ.get('HORDE_DATA_DIR', 'data'), help="CIFAR-100 folder (default: $HORDE_DATA_DIR or data)")
    p.add_argument('--results-dir', default=str(RESULTS), help=f"where result files go (default {RESULTS})")
    p.add_argument('--threads', type=int, default=1, help="torch CPU threads (default 1)")
    a = p.parse_args(argv)
    if a.threads < 1: fail(f"--threads must be a positive integer, got {a.threads}")
    code = checkout(a.method, a.code)
    results = Path(a.results_dir).expanduser(); results.mkdir(parents=True, exist_ok=True)
    command = ' '.join(['run_modern.py'] + (argv if argv is not None else sys.argv[1:]))
    run_one(a.method, a.seed, code, a.data_dir, results, a.threads, command)


if __name__ == '__main__':
    main()
