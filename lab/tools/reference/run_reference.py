"""Run the authors' code (Tsebeb/cvww_cir_horde) on our reduced protocol and store its numbers as our result files.

    python lab/tools/reference/run_reference.py --code ~/src/cvww_cir_horde --method fz,horde_m --seed 0,1 \
        --data-dir ~/data/cifar100 --results-dir results/reference/small --threads 1
    python lab/tools/reference/run_reference.py --plan main --method fz --workers 8 ...   # the paper's protocol (a GPU job)
    python lab/tools/reference/run_reference.py --method pass,praka --seed 1,2 --jobs 4 ...  # four runs at once (a GPU)

Their files stay unmodified on disk (none of them is in this repository). Each run is one process that imports their
`src/` and calls their `main_incremental.main` with the flags of their `run_scripts/scenario_a_cil.py` for the method,
with the networks, epoch caps and patience of our `small` preset in place of the paper's (`--plan main`: the paper's
own, as our `main_plan` has them, into results/reference/main). What has to change is patched from here at import
time, and every patch is listed in the result (`reference.patches`):

- data: their CIFAR-100 reader returns our splits (under `small`, capped: the first 100 training / 50 test images of
  each class), the very arrays our runs train on, instead of downloading the set;
- device: `.cuda()` (SSRE calls it directly) is a no-op when no GPU is present (their `main` falls back to the CPU);
- workers: `--num-workers 0` by default (one process per run; their scripts use 4 loader workers, which draw the
  augmentations from other random streams — a different draw, not a different distribution). `--workers N` gives
  their PIL pipeline N processes, which a GPU needs to be fed;
- checkpoints: after each task their approach, network and random generators are saved, so an interrupted run
  resumes after its last finished task (their code has none); a resumed process replays the stored evaluations of
  the finished tasks and restores the state and generators of the last one;
- measurement: the per-class hits of their seen-class evaluation, the validation losses their logger receives and,
  for Horde, each task's growth decision (`_decide_if_new_fe_is_trained`: whether an FE is trained, and for which
  slot) are recorded (read only: nothing they compute changes).

Before any training, their scenario (class order, validation split, every task's images in draw order) is compared
with our `make_scenario` on the same labels; a difference stops the run. The result file has our format and our run
id, so `horde_nb.paper.results.gather`, nb14's tables and `lab/tools/compare_results.py` read `results/reference/small/`
unchanged; `code: "reference"` and `reference` (their commit, their argv, the patches) mark it as theirs.
"""
from __future__ import annotations
import argparse, contextlib, dataclasses, datetime, json, os, pickle, random, subprocess, sys, time
from pathlib import Path

ENV_CODE = 'HORDE_REFERENCE_CODE'  # a checkout of Tsebeb/cvww_cir_horde, if --code is not given
RESULTS = Path('results') / 'reference'  # one folder per plan: small (nbs/07_paper/05_reference), main (the paper's protocol), repetition (nbs/07_paper/06_repetition)
PLANS = ('small', 'main', 'repetition')

# Their approach and flags per method, as `run_scripts/scenario_a_cil.py:run_methods` passes them. `{epochs}` is our
# epoch cap where a method has a cap of its own (WA's first task, FeTrIL's and Horde's feature-extractor training),
# `{net}` our preset's network (Horde's initial FE).
METHOD_FLAGS = {
    'ft': ['--approach', 'finetuning', '--task-ce-only'],
    'fz': ['--approach', 'freezing', '--task-ce-only'],
    'joint': ['--approach', 'joint'],
    'ewc': ['--approach', 'ewc', '--lamb', '40000', '--task-ce-only', '--alpha', '0.1'],
    'mas': ['--approach', 'mas', '--lamb', '10.0', '--task-ce-only', '--alpha', '0.1'],
    'lwf': ['--approach', 'lwf', '--lamb', '30.0'],
    'pass': ['--approach', 'pass'],
    'il2a': ['--approach', 'il2a'],
    'praka': ['--approach', 'praka'],
    'ssre': ['--approach', 'ssre'],
    'fetril': ['--approach', 'fetril', '--lucir-pretrain-model', 'none', '--fe-data-augment', 'cifar_augmix', '--fe-lr', '0.001',
               '--fe-epochs', '{epochs}', '--lr-patience', '10', '--test-augment', 'train'],
    'wa': ['--approach', 'wa', '--num-exemplars', '2000', '--initial-nepochs', '{epochs}', '--initial-lr', '0.001',
           '--lr-patience', '10', '--initial-wd', '0.0001'],
    **{f'horde_{k}': ['--approach', 'initial_horde', '--fe-selection', sel, '--fe-lr', '0.001', '--fe-epochs', '{epochs}',
                      '--num-fe', '10', '--use-self-supervision', '--acc-prototype', '--initial-network-name', '{net}']
       for k, sel in (('m', 'max_classes'), ('c', 'confusion_matrix'))},
}
# Their network for each role of our presets (SSRE has its re-parameterisable network in both codes; Horde's `--network`
# is its slot FEs', slim in the paper too, and its initial FE is `--initial-network-name`, the preset's main network).
NETWORKS = dict(slim=dict(main='slimresnet18', ssre='slimresnet18_ssre_bn', slot='slimresnet18'),
                paper=dict(main='resnet18_cbam', ssre='resnet18_ssre_bn', slot='slimresnet18'))
SCENARIO_FLAGS = dict(cil=['--loader-method', 'cil', '--num-tasks', '{n_tasks}', '--num-start-classes', '{n_start_classes}'])
# Any other stream of ours (nbs/07_paper/06_repetition's slot and sampling streams) is served to their code by a loader of this harness
# (`patch_stream`): their `Manage_Loaders` with our class order, table and every task's images.
STREAM_LOADER = 'horde_nb_stream'
STREAM_FLAGS = ['--loader-method', STREAM_LOADER, '--num-tasks', '{n_tasks}']
ROLE = dict(ssre='ssre', horde_m='slot', horde_c='slot')  # which network `--network` names (default: main)
METHOD_KW = {'fetril': ('head_epochs',)}  # our method arguments that have a flag of theirs (below)


def fail(msg):
    "One line naming the problem, prefixed with the tool that was run (this launcher, or a tool beside it that uses it); exit 2."
    here = Path(__file__).resolve().parent
    tool = Path(sys.argv[0]).stem if sys.argv and Path(sys.argv[0]).resolve().parent == here else 'run_reference'
    print(f"{tool}: error: {msg}", file=sys.stderr); sys.exit(2)


# What their src/ imports at start-up and our package does not need: module -> pip name (the `reference` extra).
THEIR_MODULES = {'sklearn': 'scikit-learn', 'torchmetrics': 'torchmetrics', 'tensorboard': 'tensorboard'}


def missing_requirements(modules=THEIR_MODULES) -> list:
    "The pip names of `modules` that this environment cannot import."
    import importlib.util
    return [pip for mod, pip in modules.items() if importlib.util.find_spec(mod) is None]


def authors_code(path=None) -> Path:
    "The checkout of their repository (--code, else $HORDE_REFERENCE_CODE), once their imports are known to be here."
    p = path or os.environ.get(ENV_CODE)
    if not p: fail(f"give --code PATH or set {ENV_CODE} to a checkout of Tsebeb/cvww_cir_horde")
    p = Path(p).expanduser().resolve()
    if not (p / 'src' / 'main_incremental.py').is_file(): fail(f"{p} has no src/main_incremental.py; give a checkout of Tsebeb/cvww_cir_horde")
    miss = missing_requirements()
    if miss: fail(f"their code needs {', '.join(miss)}, not installed here: pip install -e \".[reference]\"")
    return p


def their_commit(code:Path, sub:str='src') -> str:
    "Their commit, '+modified' if a file under `sub` differs from it (the runner never changes one)."
    git = lambda *a: subprocess.run(['git', '-C', str(code), *a], capture_output=True, text=True, timeout=10).stdout.strip()
    try: sha, dirty = git('rev-parse', 'HEAD'), git('status', '--porcelain', '--', sub)
    except (OSError, subprocess.SubprocessError): return 'unknown'
    return (sha + ('+modified' if dirty else '')) if sha else 'unknown'


def their_argv(spec, scen, workers:int=0) -> list:
    "Their command line for our spec: shared flags, the method's flags, our protocol's numbers and networks."
    if spec.method not in METHOD_FLAGS: fail(f"method {spec.method!r} has no mapping to their flags")
    extra = set(spec.method_kw) - set(METHOD_KW.get(spec.method, ()))
    if extra: fail(f"method arguments {sorted(extra)} have no counterpart in their flags")
    t = spec.train
    if t.first_max_epochs is not None or t.first_patience is not None: fail("a first task with a protocol of its own has no counterpart in their flags")
    fill = dict(net=NETWORKS[spec.arch]['main'], epochs=t.max_epochs, n_tasks=scen.n_tasks, n_start_classes=scen.params.get('n_start_classes'))
    head_epochs = spec.method_kw.get('head_epochs', t.max_epochs)  # FeTrIL's head trains under --nepochs
    argv = ['--datasets', 'cifar100_il2a', *SCENARIO_FLAGS.get(spec.scenario, STREAM_FLAGS), '--seed', spec.seed, '--validation', 0.1,
            '--num-workers', workers, '--batch-size', t.batch_size, '--lr-patience', t.patience, '--lr', t.lr,
            '--nepochs', head_epochs, '--momentum', 0.9, '--weight-decay', t.weight_decay,
            *METHOD_FLAGS[spec.method], '--network', NETWORKS[spec.arch][ROLE.get(spec.method, 'main')]]
    return [str(a).format(**fill) for a in argv]


def stub_absent(*names):
    "An empty module for each of `names` this environment lacks: imported by their code on paths our runs never take."
    import types
    for name in names:
        if name in sys.modules: continue
        try: __import__(name)
        except ImportError: sys.modules[name] = types.ModuleType(name)


@contextlib.contextmanager
def their_src(code:Path):
    "Their modules import each other as top-level packages of `src/`."
    sys.path.insert(0, str(code / 'src'))
    try: yield
    finally: sys.path.remove(str(code / 'src'))


def patch_data(train, test) -> str:
    "Their torchvision CIFAR-100 reader returns our splits (no download: the same arrays as our runs)."
    import datasets.data_loader as dl
    class CappedCIFAR100:
        def __init__(self, root, train=True, download=False, **kw):
            s = splits[train]
            self.data, self.targets = s.x, s.y.tolist()
    splits = {True: train, False: test}
    dl.TorchVisionCIFAR100 = CappedCIFAR100
    return f"data: datasets.data_loader.TorchVisionCIFAR100 returns our splits ({len(train)} training, {len(test)} test images)"


def patch_cuda() -> list:
    "`.cuda()` is a no-op on a machine without a GPU."
    import torch
    if torch.cuda.is_available(): return []
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    return ["device: torch.Tensor.cuda and torch.nn.Module.cuda return their object unchanged (no GPU here)"]


def patch_ssre_width() -> str:
    "Their SSRE ResNet hard-codes 64 channels in its first BatchNorm: at the slim width (20) it cannot run at all."
    import torch.nn as nn
    import networks.resnet_18_ssre_with_bn as m
    init0 = m.ResNet.__init__
    def init(self, *a, **k):
        init0(self, *a, **k)
        width = self.conv1.out_channels
        if self.bn1.num_features != width: self.bn1 = nn.BatchNorm2d(width)  # no random draw: the same stream as theirs
    m.ResNet.__init__ = init
    return ("network: networks.resnet_18_ssre_with_bn.ResNet's first BatchNorm gets the network's width "
            "(their code fixes it at 64, which only the paper's width satisfies)")


def patch_stream(scen) -> list:
    """Their code has no loader for our stream: a loader module of this harness serves it, and their data set takes our
    class order (their code shuffles the classes only where the data set names no order; the streams of Hemati et al.
    keep the labels). The tasks' images, in our draw order, index their training set: ours without the validation
    images, in dataset order, as their `memory_dataset.get_data` leaves it."""
    import types
    import numpy as np
    from torch.utils.data import DataLoader, Subset
    import datasets.dataset_config as config
    from scenarios.manage_loaders import Manage_Loaders
    config.dataset_config['cifar100_il2a']['class_order'] = [int(c) for c in scen.class_order]
    val = np.sort(scen.val_indices)

    class Scenario_Loader(Manage_Loaders):
        "Our stream in their loader: the table (their classes x tasks), their class mapping, our tasks' images."
        def _generate_tasks(self): return np.asarray(scen.table, dtype=np.int64)

        def split_loaders(self):
            self._scenario_samples = self._generate_tasks()
            self._calculate_class_mapping()
            self._apply_class_mapping_on_dataset()
            self._list_trn_loaders = [self.task_loader(t) for t in range(self.num_tasks)]

        def task_loader(self, t):
            idx = scen.task_indices(t)
            at = idx - np.searchsorted(val, idx)  # position in their training set, which has no validation image
            return DataLoader(Subset(self.total_trn_loader.dataset, at.tolist()), batch_size=self.batch_size, shuffle=True,
                              num_workers=self.num_workers, pin_memory=self.pin_memory)

    module = types.ModuleType(f'scenarios.{STREAM_LOADER}')
    module.Scenario_Loader = Scenario_Loader
    sys.modules[module.__name__] = module
    return [f"scenario: --loader-method {STREAM_LOADER}, a loader of this harness that serves our {scen.name} stream (their "
            "Manage_Loaders with our table and each task's images in our draw order)",
            "data: datasets.dataset_config's cifar100_il2a takes our class order"]


def check_scenario(loaders, scen, train):
    "Their class order, validation split and every task's images (in draw order) against our `make_scenario`."
    import numpy as np
    lm = scen.label_map  # canonical class -> our label; theirs maps permuted label k (canonical class_order[k]) -> label
    problems = [] if all(loaders.class_mapping[k] == lm[c] for k, c in enumerate(scen.class_order)) else ['class order']
    val, trn = loaders.total_val_loader.dataset, loaders.total_trn_loader.dataset
    if not (np.array_equal(val.images, train.x[scen.val_indices]) and np.array_equal(val.labels.numpy(), lm[train.y[scen.val_indices]])):
        problems.append('validation split')
    for t in range(scen.n_tasks):
        idx, want = np.asarray(loaders.get_trn_loader(t).dataset.indices), scen.task_indices(t)
        if not (np.array_equal(trn.images[idx], train.x[want]) and np.array_equal(trn.labels.numpy()[idx], lm[train.y[want]])):
            problems.append(f'task {t}')
    if problems: raise RuntimeError(f"their scenario differs from make_scenario's: {', '.join(problems)}")


class Stop(Exception): "Raised after task `stop_after` is checkpointed: a planned interruption (tests)."


class Recorder:
    """Checkpoints, resume and measurement around their approach.

    Their `main` evaluates after each task t: all test images, the seen classes (our A_t), then the classes of each
    task 0..t — t + 3 calls of `appr.eval`. The state is saved after training and again after those calls."""
    # not saved: the process's own, or ours
    SKIP = ('logger', 'model', 'eval', 'calculate_metrics', '_decide_if_new_fe_is_trained', '_recorded')
    def __init__(self, ckpt:Path, n_seen, threads:int, done:dict|None, stop_after:int|None=None):
        self.ckpt, self.n_seen, self.threads, self.done, self.stop_after = ckpt, n_seen, threads, done, stop_after
        self.n_done = len(done['evals']) if done else 0
        self.evals = done['evals'] if done else []      # per task: main's eval results [(loss, acc), ...]
        self.hits = done['hits'] if done else []        # per task: per-class hits of the seen-class test
        self.val_loss = done['val_loss'] if done else []  # per task: validation losses in logged order
        self.times = done['times'] if done else []
        self.growth = done.get('growth', [None] * self.n_done) if done else []  # per task: Horde's (train an FE?, slot)
        self.replay = [list(e) for e in self.evals]     # stored evaluations, given back instead of recomputed
        self.wall_before, self.t0 = (done['wall_s'] if done else 0.), time.perf_counter()
        self.training, self.collect, self.task, self.decision = False, None, None, None

    def install(self, Inc):
        "Wrap the base class's `train` (no approach overrides it)."
        rec, orig = self, Inc.train
        def train(appr, t, trn_loader, val_loader):
            if not getattr(appr, '_recorded', False): rec.wrap(appr)
            rec.task = t
            if t < rec.n_done:  # finished before: nothing to train; the last such task restores its state
                if t == rec.n_done - 1: rec.restore(appr)
                return
            rec.training = True; rec.val_loss.append([])
            t0 = time.perf_counter()
            try: orig(appr, t, trn_loader, val_loader)
            finally: rec.training = False
            rec.times.append(dict(train_s=time.perf_counter() - t0))
            rec.growth.append(rec.decision); rec.decision = None
            rec.evals.append([]); rec.hits.append(None); rec.replay.append([])
            rec.save(appr)
        Inc.train = train

    def wrap(self, appr):
        import torch, numpy as np
        rec, eval0, metrics0, log0 = self, appr.eval, appr.calculate_metrics, appr.logger.log_scalar
        def eval_(t, loader, *a, **k):
            if rec.training: return eval0(t, loader, *a, **k)  # validation inside their fit
            if rec.replay[rec.task]: return tuple(rec.replay[rec.task].pop(0))
            calls = rec.evals[rec.task]
            rec.collect = [] if len(calls) == 1 else None
            out = eval0(t, loader, *a, **k)
            if rec.collect is not None:
                hit, y = (torch.cat(v) for v in zip(*rec.collect))
                rec.hits[rec.task] = np.bincount(y[hit].numpy(), minlength=rec.n_seen(rec.task)).tolist()
                rec.collect = None
            calls.append([None if v is None else float(v) for v in out])
            if len(calls) == rec.task + 3:
                rec.save(appr)
                if rec.task == rec.stop_after: raise Stop(rec.task)
            return out
        def metrics(outputs, targets):
            hits = metrics0(outputs, targets)
            if rec.collect is not None: rec.collect.append((hits.bool().cpu(), targets.cpu()))
            return hits
        def log_scalar(task, iter, name, value, group=None, curtime=None):
            if rec.training and name == 'loss' and group == 'valid': rec.val_loss[-1].append(float(value))
            return log0(task=task, iter=iter, name=name, value=value, group=group, curtime=curtime)
        appr.eval, appr.calculate_metrics, appr.logger.log_scalar, appr._recorded = eval_, metrics, log_scalar, True
        if hasattr(appr, '_decide_if_new_fe_is_trained'):  # Horde: its growth decision, as returned
            decide0 = appr._decide_if_new_fe_is_trained
            def decide(*a, **k):
                out = decide0(*a, **k); rec.decision = [bool(out[0]), int(out[1])]; return out
            appr._decide_if_new_fe_is_trained = decide

    def save(self, appr):
        import torch, numpy as np
        st = dict(net=appr.model, appr={k: v for k, v in appr.__dict__.items() if k not in self.SKIP},
                  evals=self.evals, hits=self.hits, val_loss=self.val_loss, times=self.times, growth=self.growth, threads=self.threads,
                  wall_s=self.wall_s, rng=dict(python=random.getstate(), numpy=np.random.get_state(), torch=torch.get_rng_state(),
                                               cuda=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None))
        tmp = self.ckpt.with_name(f".{self.ckpt.name}.{os.getpid()}.tmp")
        torch.save(st, tmp, pickle_protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.ckpt)

    @property
    def wall_s(self): return self.wall_before + time.perf_counter() - self.t0

    def restore(self, appr):
        import torch, numpy as np
        st, net = self.done, appr.model
        old = st['net']
        net.__dict__.clear(); net.__dict__.update(old.__dict__)  # in place: their `main` holds its own reference to it
        keep = {k: v for k, v in appr.__dict__.items() if k in self.SKIP}  # logger, network and our wrappers
        appr.__dict__.clear(); appr.__dict__.update({k: net if v is old else v for k, v in st['appr'].items()}, **keep)
        random.setstate(st['rng']['python']); np.random.set_state(st['rng']['numpy']); torch.set_rng_state(st['rng']['torch'])
        if st['rng'].get('cuda') is not None and torch.cuda.is_available(): torch.cuda.set_rng_state_all(st['rng']['cuda'])


def run_one(spec, code:Path, results_dir:Path, threads:int, command:str, stop_after:int=None, workers:int=0) -> dict:
    "One run of their code under `spec`'s protocol (resumed if a checkpoint is there); returns the stored record."
    import numpy as np, torch
    torch.set_num_threads(threads)
    from horde_nb.runs.spec import load_data, scenario_of, fingerprint
    from horde_nb.runs.runner import provenance
    from horde_nb.runs.store import clean_record, load_result, RunFiles
    from horde_nb.train.metrics import MetricLog
    out, ckpt = RunFiles(spec, results_dir).result, RunFiles(spec, results_dir).checkpoint
    if out.exists(): print(f"{spec.run_id}: finished before, skipped", flush=True); return load_result(out)
    train, test = load_data(spec)
    scen = scenario_of(spec, train)
    argv = their_argv(spec, scen, workers)
    logs = results_dir / 'logs' / spec.run_id
    logs.mkdir(parents=True, exist_ok=True)
    full = argv + ['--results-path', str(logs), '--exp-name', spec.run_id]
    started = datetime.datetime.now().astimezone().isoformat(timespec='seconds')
    with their_src(code):
        patches = [patch_data(train, test), *patch_cuda(), f'workers: --num-workers {workers} (their scripts: 4)']
        if spec.method == 'ssre' and spec.arch != 'paper': patches.append(patch_ssre_width())
        if spec.scenario not in SCENARIO_FLAGS: patches += patch_stream(scen)
        done = torch.load(ckpt, weights_only=False) if ckpt.exists() else None  # unpickling needs their modules
        if done is not None and done['threads'] != threads: fail(f"{ckpt.name} was computed with {done['threads']} threads; resume with --threads {done['threads']}")
        import main_incremental, approach.incremental_learning as il, scenarios.manage_loaders as ml
        rec = Recorder(ckpt, scen.n_seen, threads, done, stop_after)
        rec.install(il.Inc_Learning_Appr)
        split0 = ml.Manage_Loaders.split_loaders
        def split(self): split0(self); check_scenario(self, scen, train)
        ml.Manage_Loaders.split_loaders = split
        patches += ["checkpoints: approach.incremental_learning.Inc_Learning_Appr.train saves the approach, network and "
                    "generators after each task and restores them on resume; the approach's eval, calculate_metrics, "
                    "logger.log_scalar and (Horde) _decide_if_new_fe_is_trained are wrapped to record what they return",
                    "scenario check: scenarios.manage_loaders.Manage_Loaders.split_loaders compares its tasks with make_scenario"]
        print(f"== their {spec.method} on {spec.scenario}, seed {spec.seed}, {threads} thread(s) [{spec.run_id}]"
              + (f", resuming after task {rec.n_done}" if done else ''), flush=True)
        with open(logs / 'stdout.txt', 'a', buffering=1) as f, contextlib.redirect_stdout(f): main_incremental.main(full)
    log, ys = MetricLog(), scen.label_map[test.y]
    for t in range(scen.n_tasks):
        n = scen.n_seen(t)
        log.add(t, np.asarray(rec.hits[t]), np.bincount(ys[ys < n], minlength=n), n, scen.task_classes(t).tolist())
    their = dict(acc=[e[1][1] for e in rec.evals], acc_all_classes=[e[0][1] for e in rec.evals],
                 triangle=[[c[1] for c in e[2:]] for e in rec.evals])
    if not np.allclose(log.acc, their['acc'], rtol=0, atol=1e-12): raise RuntimeError(f"recorded hits {log.acc} disagree with their accuracies {their['acc']}")
    record = dict(strategy=spec.method, code='reference', acc=log.acc, avg_acc=log.avg_acc, avg_forgetting=log.avg_forgetting,
                  forgetting=log.forgetting, triangle=log.to_dict()['triangle'], metric_log=log.to_dict(),
                  fits=[dict(epochs=len(v), best_loss=min(v) if v else None, val_loss=v) for v in rec.val_loss],
                  times=rec.times, spec=dataclasses.asdict(spec), run_id=spec.run_id, scenario_fingerprint=fingerprint(scen),
                  threads=threads, device=device_label(), their=their, provenance=provenance(command),
                  reference=dict(repository='Tsebeb/cvww_cir_horde', commit=their_commit(code), argv=full, patches=patches),
                  started=started, finished=datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
                  wall_s=rec.wall_s, resumed=done is not None)
    if any(g is not None for g in rec.growth): record['growth'] = rec.growth
    record = clean_record(record)  # sealed, without this machine's paths (nbs/06_runs/01_store)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record)); os.replace(tmp, out)
    ckpt.unlink(missing_ok=True)
    return record


def device_label() -> str:
    "Where their `main` trains, as our records name it: 'cpu', or 'cuda (<GPU>)' (their main takes a GPU when one is there)."
    import torch
    return f"cuda ({torch.cuda.get_device_name()})" if torch.cuda.is_available() else 'cpu'


def dispatch(commands:list, jobs:int=1) -> list:
    "Run each command (an argv list) as a process, `jobs` at a time; their exit codes, in order."
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(jobs) as pool: return list(pool.map(lambda c: subprocess.run(c).returncode, commands))


def specs(methods, seeds, scenario='cil', shrink=None, plan='small', streams=None) -> list:
    """Our specs for these methods and seeds: the study's (`small` preset), the paper's (`main`), or nbs/07_paper/06_repetition's look at
    repetition (`repetition`: `streams`, labels of its `STREAMS`, default all); `shrink` reduces them (tests)."""
    from horde_nb.paper.study import study_plan
    from horde_nb.paper.results import main_plan
    from horde_nb.paper.repetition import repetition_plan, STREAMS
    if plan == 'repetition':
        unknown = [k for k in streams or () if k not in STREAMS]
        if unknown: fail(f"--stream: {unknown[0]!r} is not a stream of nbs/07_paper/06_repetition; its streams: {', '.join(STREAMS)}")
        chosen = {k: v for k, v in STREAMS.items() if not streams or k in streams}
        cells = repetition_plan(methods=tuple(methods), streams=chosen, seeds=tuple(seeds), shrink=shrink)
    else:
        make = study_plan if plan == 'small' else lambda **kw: main_plan(**kw)
        cells = make(methods=tuple(methods), scenarios=(scenario,), seeds=tuple(seeds), shrink=shrink)
    return [s for cell in cells.values() for s in cell]


def main(argv=None):
    p = argparse.ArgumentParser(prog='run_reference', description=__doc__.split('\n\n')[0])
    p.add_argument('--code', help=f"checkout of Tsebeb/cvww_cir_horde (default: ${ENV_CODE})")
    p.add_argument('--method', required=True, help=f"methods, comma-separated: {', '.join(METHOD_FLAGS)}")
    p.add_argument('--seed', default='0', help="seeds, comma-separated (default 0)")
    p.add_argument('--data-dir', default=os.environ.get('HORDE_DATA_DIR', 'data'), help="CIFAR-100 folder (default: $HORDE_DATA_DIR or data)")
    p.add_argument('--plan', default='small', choices=PLANS, help="our study's reduced protocol (default), the paper's, "
                   "or nbs/07_paper/06_repetition's streams under the study's protocol (repetition)")
    p.add_argument('--stream', help="with --plan repetition: stream labels of nbs/07_paper/06_repetition, separated by ';' (default: all), "
                   "e.g. 'slot K=4;slot K=10'")
    p.add_argument('--results-dir', help=f"where result files go (default {RESULTS}/<plan>)")
    p.add_argument('--threads', type=int, default=1, help="torch CPU threads per run (default 1)")
    p.add_argument('--workers', type=int, default=0, help="their DataLoader's worker processes (default 0: one process per run)")
    p.add_argument('--jobs', type=int, default=1, help="runs at once, one process each (default 1; a GPU takes many)")
    a = p.parse_args(argv)
    methods = [m.strip() for m in a.method.split(',') if m.strip()]
    try: seeds = [int(s) for s in a.seed.split(',') if s.strip()]
    except ValueError: fail(f"--seed: {a.seed!r} is not a comma-separated list of integers")
    if not methods or not seeds: fail("--method and --seed need at least one value each")
    bad = [m for m in methods if m not in METHOD_FLAGS]
    if bad: fail(f"--method: {bad[0]!r} has no mapping; known: {', '.join(METHOD_FLAGS)}")
    if a.threads < 1: fail(f"--threads must be a positive integer, got {a.threads}")
    if a.workers < 0: fail(f"--workers must be 0 or more, got {a.workers}")
    if a.jobs < 1: fail(f"--jobs must be a positive integer, got {a.jobs}")
    code = authors_code(a.code)
    results = Path(a.results_dir or RESULTS / a.plan).expanduser(); results.mkdir(parents=True, exist_ok=True)
    command = ' '.join(['run_reference.py'] + (argv if argv is not None else sys.argv[1:]))
    streams = [k.strip() for k in (a.stream or '').split(';') if k.strip()]
    if streams and a.plan != 'repetition': fail("--stream applies to --plan repetition only")
    if a.plan == 'repetition' and not streams:
        from horde_nb.paper.repetition import STREAMS
        streams = list(STREAMS)  # each run's process is told its one stream
    todo = [dataclasses.replace(s, data_dir=a.data_dir) for s in specs(methods, seeds, plan=a.plan, streams=streams)]
    if len(todo) == 1: run_one(todo[0], code, results, a.threads, command, workers=a.workers); return
    # one process per run: their modules and our patches are process-global
    label = {s.run_id: k for k in streams for s in specs(methods, seeds, plan=a.plan, streams=[k])}
    rcs = dispatch([[sys.executable, __file__, '--code', str(code), '--method', s.method, '--seed', str(s.seed),
                     '--data-dir', a.data_dir, '--results-dir', str(results), '--threads', str(a.threads),
                     '--plan', a.plan, '--workers', str(a.workers), *(['--stream', label[s.run_id]] if label.get(s.run_id) else [])]
                    for s in todo], a.jobs)
    failed = [f"{s.run_id} (exit {rc})" for s, rc in zip(todo, rcs) if rc]
    if failed: print(f"run_reference: {len(failed)} of {len(todo)} runs failed: {', '.join(failed)}", file=sys.stderr); sys.exit(1)


if __name__ == '__main__':
    main()
