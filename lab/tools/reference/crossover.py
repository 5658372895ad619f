"""The 2×2 crossover of a method's first-task network and its code: which of the two makes the codes differ?

    python lab/tools/reference/crossover.py --code ~/src/cvww_cir_horde --method ssre --seed 0 --upto 2 \
        --data-dir ~/data/cifar100

Each code trains task 0 of the run (`small` preset, as `run_reference.py`) and stops; then each code goes on to task
`--upto` from each task-0 state: its own (the diagonal: the two codes' ordinary runs) and the other code's
(transplanted: the network, and what the method derives from it at the end of task 0). If the arms that share a
task-0 state agree and the arms that share a code do not, the difference between the full runs is the first task's
network, not what either code does afterwards. `--upto` may be the last task (whole runs: Avg f over all tasks).
Methods: those whose task-0 state is the network and its derivatives (`TRANSPLANTS`). Each run of their code is a
process of its own (their modules and the runner's patches are process-global). Checkpoints go to `--work` (never
committed; finished steps are skipped, so an interrupted call resumes); the summary (task 0 of each code; per arm and task 1..upto: seen-class accuracy, accuracy on the first task's
classes and on the newest task's classes, validation losses (per epoch, and the best); Avg A and Avg f over tasks 0..upto) goes to `--out`.

    python lab/tools/reference/crossover.py --method fz --seed 1 --upto 4 --reps 8 --state ours ...

`--reps N` (after the crossover has made the task-0 states) asks whether a difference between the codes is more than
one draw: each code goes on from the same task-0 state N times, each time under other random streams (ours: every
loader stream shifted and each task's new head rows drawn from a reseeded generator; theirs: their checkpoint's
generators reseeded, which draw their batch order, augmentation and new head rows). The per-replicate summaries go
to `--out`/reps/. With `--state fresh` (no crossover needed) each replicate trains its own task 0 as well, under other
streams from the start (initial weights too): whether a code's first-task fit differs beyond the draw. `--jobs N`
trains N replicates at once, one process each (a GPU takes many); the summary is written once all have finished.

    python lab/tools/reference/crossover.py --method il2a --seed 0 --upto 1 --reps 6 --state swap ...

`--state swap` (after `--state fresh` with as many replicates) runs replicate r of each code from the *other* code's
fresh task-0 state r, under replicate r's streams. With the fresh runs, each of the 2N fresh first-task networks has
then gone on in both codes: whether one code's later tasks differ from the other's on the same networks, and whether
one code's first fits yield networks that the later tasks treat differently. Fresh replicates keep their task-0
state; ours from calls before they did are trained again (the same state on the same processor and thread count:
the summary records whether A_0 repeats).
"""
from __future__ import annotations
import argparse, contextlib, dataclasses, datetime, json, os, random, shutil, subprocess, sys, time
from pathlib import Path
import numpy as np

if not __package__:  # run as a file: import the siblings as the package `tools.reference`, as `python -m` from the
    sys.path[0] = str(Path(__file__).resolve().parents[2]); __package__ = 'tools.reference'  # repository root would (PEP 366)
from . import run_reference as launcher
from .golden import ours_name, ssre_name, pass_name

OUT = Path('results') / 'reference' / 'crossover'
ARMS = ('ours/ours', 'ours/theirs', 'theirs/ours', 'theirs/theirs')  # code / whose task-0 state


TASK0 = 'task0.ckpt'  # a fresh replicate's task-0 state (either code), kept for `--state swap`
REP_STRIDE, REP_SEED = 7919, 10_000  # replicate r: our loader seeds + r·REP_STRIDE; generators seeded r·REP_SEED (+ t)


def _their_protos(appr:dict) -> tuple:
    "(labels, prototypes [C, d]) of their approach: a list with `class_label` (SSRE, PASS, IL2A) or a dict by class (PRAKA)."
    p = appr['prototype']
    if isinstance(p, dict): return np.array(sorted(p)), np.stack([p[c] for c in sorted(p)])
    return np.asarray(appr['class_label']), np.asarray(p)


def _derived_into_ours(s, appr:dict, old_sd:dict):
    "Their frozen copy, prototypes (and IL2A's covariances, PASS's radius) into our strategy; the classes must match."
    import torch
    s.old.load_state_dict(old_sd)
    labels, protos = _their_protos(appr)
    if not np.array_equal(labels, s.store.labels.cpu().numpy()):
        launcher.fail(f"the prototype labels differ: theirs {labels[:5].tolist()}…, ours {s.store.labels.tolist()[:5]}…")
    for mine, theirs in ((s.store.protos, protos), (s.store.covs, appr.get('cov'))):
        if mine is None: continue
        v = torch.as_tensor(np.asarray(theirs), dtype=mine.dtype)
        if v.shape != mine.shape: launcher.fail(f"their prototype statistics {tuple(v.shape)} do not fit ours {tuple(mine.shape)}")
        mine.copy_(v)
    if 'radius' in appr: s.radius = float(appr['radius'])


def _derived_into_theirs(appr:dict, s, sd:dict):
    "Our frozen copy, prototypes (and IL2A's covariances, PASS's radius) into their approach, in their types."
    appr['old_model'].load_state_dict(sd)
    labels, protos = _their_protos(appr)
    if not np.array_equal(labels, s.store.labels.cpu().numpy()):
        launcher.fail(f"the prototype labels differ: theirs {labels[:5].tolist()}…, ours {s.store.labels.tolist()[:5]}…")
    mine = s.store.protos.cpu().numpy().astype(protos.dtype)
    if isinstance(appr['prototype'], dict): appr['prototype'] = {c: mine[i] for i, c in enumerate(sorted(appr['prototype']))}
    else: appr['prototype'] = list(mine)
    if appr.get('cov') is not None: appr['cov'] = s.store.covs.cpu().numpy().astype(np.asarray(appr['cov']).dtype)
    if 'radius' in appr: appr['radius'] = np.float64(s.radius)


# Per method: their parameter name -> ours, and what our frozen copy (the distillation target) holds: None (no copy:
# the task-0 state is the network alone, FZ and FT), 'network' (SSRE) or 'backbone' (PASS, PRAKA, IL2A; their copy is
# the whole network). Methods with a copy also carry their class prototypes over, the labels checked equal; IL2A its
# class covariances, PASS the radius of its Gaussian prototype augmentation. 'teacher' (WA): a copy of the whole
# network and nothing derived from it; each code keeps its own random exemplars (a draw, not the network's doing).
TRANSPLANTS = {'fz': (ours_name, None), 'ft': (ours_name, None), 'ssre': (ssre_name, 'network'),
               'pass': (pass_name, 'backbone'), 'praka': (pass_name, 'backbone'), 'il2a': (pass_name, 'backbone'),
               'wa': (ours_name, 'teacher')}
NET = {'wa': 'net'}  # our strategy's attribute holding the network, where it is not `model`


def _our_strategy(spec, ours_ckpt:dict):
    "Our checkpoint's strategy: a fresh one of the spec holding the checkpoint's declared state."
    from horde_nb.methods.catalogue import make_strategy
    return make_strategy(spec.method, spec.train, spec.arch, **spec.method_kw).load_state(ours_ckpt['strategy'])


def into_ours(spec, ours_ckpt:dict, theirs_ckpt:dict) -> dict:
    "Our task-0 checkpoint with their task-0 state put in."
    name, frozen = TRANSPLANTS[spec.method]
    s = _our_strategy(spec, ours_ckpt)
    sd = {name(k): v for k, v in theirs_ckpt['net'].state_dict().items()}
    getattr(s, NET.get(spec.method, 'model')).load_state_dict(sd)
    if frozen == 'teacher': s.old.load_state_dict(sd)
    elif frozen: _derived_into_ours(s, theirs_ckpt['appr'], sd if frozen == 'network' else
                                  {k[len('backbone.'):]: v for k, v in sd.items() if k.startswith('backbone.')})
    return {**ours_ckpt, 'strategy': s.state()}


def into_theirs(spec, theirs_ckpt:dict, ours_ckpt:dict) -> dict:
    "Their task-0 checkpoint with our task-0 state put in."
    name, frozen = TRANSPLANTS[spec.method]
    net, s = theirs_ckpt['net'], _our_strategy(spec, ours_ckpt)
    back = {name(k): k for k in net.state_dict()}
    sd = {back[k]: v for k, v in getattr(s, NET.get(spec.method, 'model')).state_dict().items()}
    net.load_state_dict(sd)
    if frozen == 'teacher': theirs_ckpt['appr']['model_old'].load_state_dict(sd)
    elif frozen: _derived_into_theirs(theirs_ckpt['appr'], s, sd)
    return theirs_ckpt


def summary(acc, triangle, val_loss) -> dict:
    """Per task: seen-class accuracy, accuracy on the first task's classes and on the newest task's, the validation loss
    of each epoch (when the lr was divided follows from it) and the best one."""
    return dict(acc=list(acc), first_task=[r[0] for r in triangle], newest_task=[r[t] for t, r in enumerate(triangle)],
                val_loss=[list(v) for v in val_loss], best_val_loss=[min(v) if v else None for v in val_loss])


def our_summary(ck:dict) -> dict:
    ml = ck['progress']['metric_log']
    return summary(ml['acc'], ml['triangle'], [f.get('val_loss') or [f['best_loss']] for f in ck['progress']['fits']])  # older: best only


def their_summary(ck:dict) -> dict:
    ev = ck['evals']  # per task: main's calls (all classes, seen classes, then each task 0..t) as (loss, acc)
    return summary([e[1][1] for e in ev], [[c[1] for c in e[2:]] for e in ev], ck['val_loss'])


def result_summary(rec:dict) -> dict:
    "A finished run's result file (both codes write our format)."
    return summary(rec['acc'], rec['triangle'], [f.get('val_loss') or [f['best_loss']] for f in rec['fits']])


@contextlib.contextmanager
def our_streams(rep:int, cls):
    """Replicate `rep` of our run: every loader stream shifted by rep·REP_STRIDE, the global generator (new head rows)
    seeded rep·REP_SEED + t as each task starts, and a new network's initial weights drawn after seeding it rep·REP_SEED − 1."""
    import torch, horde_nb.train.strategy as HS, horde_nb.train.registry as HM
    seed0, learn0, build0 = HS.stream_seed, cls.learn, HM.Method.build
    mods = [m for n, m in list(sys.modules.items()) if n.startswith('horde_nb') and getattr(m, 'stream_seed', None) is seed0]
    def shifted(cfg, t, stream=0, family='loader'): return seed0(cfg, t, stream, family) + REP_STRIDE * rep
    def learn(self, task): torch.manual_seed(REP_SEED * rep + task.t); return learn0(self, task)
    def build(self, *a, **k): torch.manual_seed(REP_SEED * rep - 1); return build0(self, *a, **k)
    for m in mods: m.stream_seed = shifted
    cls.learn, HM.Method.build = learn, build  # every strategy the runner builds: a new run's and a resumed one's
    try: yield
    finally:
        for m in mods: m.stream_seed = seed0
        cls.learn, HM.Method.build = learn0, build0


def their_fresh_streams(rep:int):
    """Replicate `rep` of their whole run: once their loaders have drawn the scenario, every `utils.seed_everything`
    (before the network, the approach and so the training) seeds seed + rep·REP_SEED; the scenario stays the seed's."""
    import utils, scenarios.manage_loaders as ml
    seed0, split0, split_done = utils.seed_everything, ml.Manage_Loaders.split_loaders, []
    def split(self): split0(self); split_done.append(True)
    def seed_everything(seed=0): return seed0(seed + REP_SEED * rep if split_done else seed)
    utils.seed_everything, ml.Manage_Loaders.split_loaders = seed_everything, split


def their_streams(ck:dict, rep:int) -> dict:
    "Replicate `rep` of their later tasks: their checkpoint's torch generator (batch order, augmentation, new head rows) and Python's reseeded."
    import torch
    ck['rng']['torch'] = torch.Generator().manual_seed(REP_SEED * rep).get_state()
    random.seed(rep); ck['rng']['python'] = random.getstate()
    return ck


def rep_dir(a, work, rep:int, c:str) -> Path: return work / f'reps-{a.state}' / f'{c}-{rep}'


def our_run_to(spec, d:Path, t:int):
    """Our run in `d` on to task `t`, from its checkpoint if there is one. A checkpoint that our runner would set aside
    as damaged (and then start the run over, silently turning a transplanted arm into an ordinary run) is an error."""
    from horde_nb.runs.runner import experiment, Stop
    from horde_nb.train.loop import TimeBox
    from horde_nb.runs.store import verified_load, Damaged, RunFiles
    if RunFiles(spec, d).checkpoint.exists():
        try: verified_load(RunFiles(spec, d).checkpoint)
        except Damaged as e: launcher.fail(f"{RunFiles(spec, d).checkpoint}: {e}: our runner would start this arm over; delete {d} and run again")
    try: experiment(spec, d, box=TimeBox(after_task=t))
    except Stop: pass


def our_to(a, spec, d, rep:int, t:int):
    "Our replicate `rep` in `d` on to task `t` under its streams, unless its checkpoint has it (else it resumes)."
    import torch
    from horde_nb.runs.store import RunFiles
    from horde_nb.methods.catalogue import METHODS
    ck = RunFiles(spec, d).checkpoint
    if ck.exists() and len(torch.load(ck, weights_only=False)['progress']['metric_log']['acc']) > t: return
    with our_streams(rep, METHODS[a.method].cls): our_run_to(spec, d, t)


def fresh_dir(work, c:str, rep:int) -> Path: return work / 'reps-fresh' / f'{c}-{rep}'


def our_task0(a, spec, work, rep:int) -> Path:
    """Our fresh replicate `rep`'s task-0 state. A replicate from before they were kept has it trained again, under its
    streams, in a folder of its own (the replicate's run stays as it is)."""
    import fcntl
    from horde_nb.runs.store import RunFiles
    d = fresh_dir(work, 'ours', rep)
    with open(d / '.lock', 'w') as lock:  # one process trains it; another reaching it waits, then reads it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / TASK0).exists():
            t = d / 'task0'
            our_to(a, spec, t, rep, 0)
            shutil.copy2(RunFiles(spec, t).checkpoint, d / TASK0); shutil.rmtree(t)
    return d / TASK0


def train_rep(a, spec, code, work, rep:int, c:str):
    """Replicate `rep` of code `c` ('ours'/'theirs') on to task `a.upto`, unless its checkpoint has it (an interrupted
    one resumes per task). It holds a lock on its folder meanwhile: a second call that reaches the same replicate waits
    for it instead of training it twice."""
    import fcntl, torch
    from horde_nb.runs.store import save_verified, RunFiles
    load = lambda f: torch.load(f, weights_only=False)
    fresh, swap, d = a.state == 'fresh', a.state == 'swap', rep_dir(a, work, rep, c)
    ours0, theirs0 = RunFiles(spec, work / 'ours-t0').checkpoint, work / 'theirs-t0' / f'{spec.run_id}.ckpt'
    if swap: ours0, theirs0 = our_task0(a, spec, work, rep), fresh_dir(work, 'theirs', rep) / TASK0  # each the other's template too
    d.mkdir(parents=True, exist_ok=True)
    with open(d / '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if RunFiles(spec, d).result.exists(): return  # --upto = the last task: the run finished and keeps its result, not a checkpoint
        if c == 'ours':
            ck = RunFiles(spec, d).checkpoint
            if not ck.exists() and not fresh:
                st = load(ours0)
                save_verified(st if a.state == 'ours' else into_ours(spec, st, load(theirs0)), ck)  # our runner reads no other
            if fresh and not ck.exists():  # keep its task-0 state for the swap
                our_to(a, spec, d, rep, 0); shutil.copy2(ck, d / TASK0)
            our_to(a, spec, d, rep, a.upto)
            return
        ck = d / f'{spec.run_id}.ckpt'
        if not ck.exists() and not fresh:
            st = load(theirs0)
            torch.save(their_streams(st if a.state == 'theirs' else into_theirs(spec, st, load(ours0)), rep), ck)
        def their_run(t):  # on to task t, unless the checkpoint has it
            ev = load(ck)['evals'] if ck.exists() else []
            if len(ev) > t and len(ev[t]) == t + 3: return
            r = subprocess.run([sys.executable, __file__, '--code', str(code), '--method', a.method, '--seed', str(a.seed),
                                '--data-dir', a.data_dir, '--their-step', str(d), str(t)]
                               + (['--their-rep', str(rep)] if fresh else []))
            if r.returncode: launcher.fail(f"their run in {d} failed (exit {r.returncode}); its log: {d / 'logs'}")
        if fresh and not (d / TASK0).exists():  # keep its task-0 state for the swap
            their_run(0); shutil.copy2(ck, d / TASK0)
        their_run(a.upto)


def replicates(a, spec, code, work, out, command) -> Path:
    """Both codes on from one task-0 state (`a.state`) to task `a.upto`, `a.reps` times each under other random streams:
    whether the codes differ beyond what the later tasks' draws alone make of one state. `a.state == 'fresh'`: each
    replicate trains its own task 0 too; `'swap'`: replicate r starts from the other code's fresh task-0 state r.
    `a.jobs` > 1 trains that many replicates at once, one process each."""
    import torch
    from horde_nb.runs.store import RunFiles
    from horde_nb.runs.runner import provenance
    from horde_nb.train.metrics import avg_accuracy, avg_forgetting
    started, t0 = datetime.datetime.now().astimezone().isoformat(timespec='seconds'), time.perf_counter()
    load = lambda f: torch.load(f, weights_only=False)
    fresh, swap = a.state == 'fresh', a.state == 'swap'
    ours0, theirs0 = RunFiles(spec, work / 'ours-t0').checkpoint, work / 'theirs-t0' / f'{spec.run_id}.ckpt'
    if a.state in ('ours', 'theirs') and not (ours0.exists() and theirs0.exists()):
        launcher.fail(f"no task-0 states in {work}: run the crossover first (without --reps)")
    if swap:  # before any training: the fresh replicates it starts from are there (ours with its task 0 kept or not)
        missing = [f"{c} {rep}" for rep in range(1, a.reps + 1) for c in ('ours', 'theirs')
                   if not (fresh_dir(work, c, rep) / (TASK0 if c == 'theirs' else '')).exists()]
        if missing: launcher.fail(f"--state swap needs the fresh replicates' task-0 states; missing: {', '.join(missing)}: "
                           f"run --state fresh --reps {a.reps} first")
    units = [(rep, c) for rep in range(1, a.reps + 1) for c in ('ours', 'theirs')]
    # the swap runs its replicates of their code first: with several jobs, our task-0 states (which older fresh
    # replicates train again) are then made in parallel
    if swap: units.sort(key=lambda u: u[1] == 'ours')
    if a.jobs > 1:  # one process per replicate and code: their modules and our stream patches are process-global
        common = ['--code', str(code), '--method', a.method, '--seed', str(a.seed), '--upto', str(a.upto), '--reps', str(a.reps),
                  '--state', a.state, '--data-dir', a.data_dir, '--work', a.work]
        rcs = launcher.dispatch([[sys.executable, __file__, *common, '--rep-unit', str(rep), c] for rep, c in units], a.jobs)
        failed = [f"{c} {rep} (exit {rc})" for (rep, c), rc in zip(units, rcs) if rc]
        if failed: launcher.fail(f"{len(failed)} of {len(units)} replicates failed: {', '.join(failed)}; run the call again to resume")
    runs, repeats = {'ours': [], 'theirs': []}, []
    def read(c, d):  # a replicate's summary, from its result (a whole run) or its checkpoint
        fin = RunFiles(spec, d).result
        if fin.exists(): return result_summary(json.loads(fin.read_text()))
        return our_summary(load(RunFiles(spec, d).checkpoint)) if c == 'ours' else their_summary(load(d / f'{spec.run_id}.ckpt'))
    with launcher.their_src(code):
        base = None if fresh or swap else our_summary(load(ours0)) if a.state == 'ours' else their_summary(load(theirs0))
        for rep, c in units:
            if a.jobs == 1: train_rep(a, spec, code, work, rep, c)
            s = read(c, rep_dir(a, work, rep, c))
            s = {k: v[:a.upto + 1] if fresh else v[1:a.upto + 1] for k, v in s.items()}
            if swap:  # the state: the other code's fresh replicate `rep`, as that code evaluated it
                base = their_summary(load(fresh_dir(work, 'theirs', rep) / TASK0)) if c == 'ours' else \
                       our_summary(load(fresh_dir(work, 'ours', rep) / TASK0))
                if c == 'theirs':  # a task-0 state trained again must be the fresh replicate's
                    repeats.append(base['acc'][0] == read('ours', fresh_dir(work, 'ours', rep))['acc'][0])
            acc = s['acc'] if fresh else [base['acc'][0]] + s['acc']  # task 0: the state as its own code evaluated it
            runs[c].append(dict(s, rep=rep, avg_acc=float(avg_accuracy(acc)), avg_forgetting=float(avg_forgetting(acc)),
                                **({'task0': {k: v[0] for k, v in base.items()}} if swap else {})))
            print(f"{c} {rep}: first task's classes {' '.join(f'{100 * v:5.1f}' for v in s['first_task'])}  "
                  f"Avg f {100 * runs[c][-1]['avg_forgetting']:.1f}", flush=True)
    # task0: the shared state as its code evaluated it (fresh: none; swap: each run's own, in the run)
    record = dict(method=a.method, seed=a.seed, upto=a.upto, state=a.state, reps=a.reps, run_id=spec.run_id,
                  task0=None if fresh or swap else {k: v[0] for k, v in base.items()}, runs=runs,
                  **({'our_task0_repeats': repeats} if swap else {}), rep_stride=REP_STRIDE, rep_seed=REP_SEED, threads=1,
                  provenance=provenance(command), reference=dict(repository='Tsebeb/cvww_cir_horde', commit=launcher.their_commit(code)),
                  started=started, wall_s=time.perf_counter() - t0)
    (out / 'reps').mkdir(parents=True, exist_ok=True)
    f = out / 'reps' / f'{spec.run_id}-to{a.upto}-{a.state}-reps{a.reps}.json'
    f.write_text(json.dumps(record, indent=1))
    print(f"replicates: {f}")
    return f


def main(argv=None):
    p = argparse.ArgumentParser(prog='crossover', description=__doc__.split('\n\n')[0])
    p.add_argument('--code', help=f"checkout of Tsebeb/cvww_cir_horde (default: ${launcher.ENV_CODE})")
    p.add_argument('--method', required=True, help=f"one of {', '.join(TRANSPLANTS)}")
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--upto', type=int, default=2, help="last task of the continuations (default 2)")
    p.add_argument('--data-dir', default=os.environ.get('HORDE_DATA_DIR', 'data'), help="CIFAR-100 folder (default: $HORDE_DATA_DIR or data)")
    p.add_argument('--work', default='runs/crossover', help="checkpoints (default runs/crossover)")
    p.add_argument('--out', default=str(OUT), help=f"where the summary goes (default {OUT})")
    p.add_argument('--reps', type=int, default=0, help="instead: both codes on from one task-0 state, N times each under other random streams")
    p.add_argument('--state', choices=('ours', 'theirs', 'fresh', 'swap'), default='ours',
                   help="whose task-0 state the replicates start from (default ours); fresh: each trains its own; "
                        "swap: replicate r the other code's fresh state r")
    p.add_argument('--jobs', type=int, default=1, help="with --reps: replicates at once, one process per code and replicate (default 1; a GPU takes many)")
    p.add_argument('--their-step', nargs=2, metavar=('DIR', 'TASK'), help=argparse.SUPPRESS)  # internal: one run of theirs
    p.add_argument('--their-rep', type=int, default=0, help=argparse.SUPPRESS)  # internal: that run is a fresh replicate
    p.add_argument('--rep-unit', nargs=2, metavar=('REP', 'CODE'), help=argparse.SUPPRESS)  # internal: train one replicate
    a = p.parse_args(argv)
    if a.jobs < 1: launcher.fail(f"--jobs must be a positive integer, got {a.jobs}")
    code = launcher.authors_code(a.code)
    if a.their_step:  # their modules and the runner's patches are process-global: one run of theirs per process
        spec = dataclasses.replace(launcher.specs([a.method], [a.seed])[0], data_dir=a.data_dir)
        if a.their_rep:
            with launcher.their_src(code): their_fresh_streams(a.their_rep)
        try: launcher.run_one(spec, code, Path(a.their_step[0]), 1, 'crossover.py', stop_after=int(a.their_step[1]))
        except launcher.Stop: pass
        return
    if a.method not in TRANSPLANTS: launcher.fail(f"--method: {a.method!r} has no transplant; known: {', '.join(TRANSPLANTS)}")
    if a.reps < 0: launcher.fail(f"--reps must be a positive count, got {a.reps}")
    if a.upto < 1: launcher.fail(f"--upto must be at least 1 (task 0 is the shared start), got {a.upto}")
    spec = dataclasses.replace(launcher.specs([a.method], [a.seed])[0], data_dir=a.data_dir)
    import torch
    from horde_nb.runs.runner import provenance
    from horde_nb.runs.store import save_verified, RunFiles
    from horde_nb.runs.spec import load_data, scenario_of
    from horde_nb.train.metrics import avg_accuracy, avg_forgetting
    n_tasks = scenario_of(spec, load_data(spec)[0]).n_tasks
    if a.upto >= n_tasks: launcher.fail(f"--upto must lie in 1..{n_tasks - 1}, got {a.upto}")
    torch.set_num_threads(1)  # as the study's and the reference runs
    work, out = Path(a.work).expanduser() / spec.run_id, Path(a.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    command = ' '.join(['crossover.py'] + (argv if argv is not None else sys.argv[1:]))
    if a.rep_unit:
        with launcher.their_src(code): return train_rep(a, spec, code, work, int(a.rep_unit[0]), a.rep_unit[1])  # their pickles need their modules
    if a.reps: return replicates(a, spec, code, work, out, command)
    started, t0 = datetime.datetime.now().astimezone().isoformat(timespec='seconds'), time.perf_counter()
    ours_ck = lambda d: RunFiles(spec, d).checkpoint
    theirs_ck = lambda d: d / f'{spec.run_id}.ckpt'
    finished = lambda d: RunFiles(spec, d).result  # --upto = the last task: the run finishes and keeps its result, not a checkpoint
    with launcher.their_src(code):  # unpickling their checkpoints needs their modules
        load = lambda f: torch.load(f, weights_only=False)
        def ours_to(d, t):  # our run in d on to task t (resumed from d's checkpoint)
            if finished(d).exists() or ours_ck(d).exists() and len(load(ours_ck(d))['progress']['metric_log']['acc']) > t: return
            our_run_to(spec, d, t)
        def theirs_to(d, t):
            ev = load(theirs_ck(d))['evals'] if theirs_ck(d).exists() else []
            if finished(d).exists() or len(ev) > t and len(ev[t]) == t + 3: return  # trained and all of main's evaluations done
            r = subprocess.run([sys.executable, __file__, '--code', str(code), '--method', a.method, '--seed', str(a.seed),
                                '--data-dir', a.data_dir, '--their-step', str(d), str(t)])
            if r.returncode: launcher.fail(f"their run in {d} failed (exit {r.returncode}); its log: {d / 'logs'}")
        ours_to(work / 'ours-t0', 0); theirs_to(work / 'theirs-t0', 0)
        for arm in ARMS:
            d = work / arm.replace('/', '-')
            d.mkdir(parents=True, exist_ok=True)
            c, start = arm.split('/')
            if c == 'ours' and not ours_ck(d).exists() and not finished(d).exists():
                ck = load(ours_ck(work / 'ours-t0'))
                save_verified(ck if start == 'ours' else into_ours(spec, ck, load(theirs_ck(work / 'theirs-t0'))), ours_ck(d))
            if c == 'theirs' and not theirs_ck(d).exists() and not finished(d).exists():
                ck = load(theirs_ck(work / 'theirs-t0'))
                torch.save(ck if start == 'theirs' else into_theirs(spec, ck, load(ours_ck(work / 'ours-t0'))), theirs_ck(d))
            (ours_to if c == 'ours' else theirs_to)(d, a.upto)
        def read(c, d):
            if finished(d).exists(): return result_summary(json.loads(finished(d).read_text()))
            return our_summary(load(ours_ck(d))) if c == 'ours' else their_summary(load(theirs_ck(d)))
        # task 0 by the code that trained it; an arm's own task-0 entry is that code's stored evaluation, not the transplant's
        task0 = {c: {k: v[0] for k, v in read(c, work / f'{c}-t0').items()} for c in ('ours', 'theirs')}
        arms = {arm: {k: v[1:a.upto + 1] for k, v in read(arm.split('/')[0], work / arm.replace('/', '-')).items()} for arm in ARMS}
        for arm in ARMS:  # Avg A and Avg f over tasks 0..upto, task 0 as the state's own code evaluated it
            acc = [task0[arm.split('/')[1]]['acc']] + arms[arm]['acc']
            arms[arm].update(avg_acc=float(avg_accuracy(acc)), avg_forgetting=float(avg_forgetting(acc)))
    record = dict(method=a.method, seed=a.seed, upto=a.upto, run_id=spec.run_id, task0=task0, arms=arms, threads=1,
                  provenance=provenance(command),
                  reference=dict(repository='Tsebeb/cvww_cir_horde', commit=launcher.their_commit(code)),
                  started=started, wall_s=time.perf_counter() - t0)
    f = out / f'{spec.run_id}-to{a.upto}.json'
    f.write_text(json.dumps(record, indent=1))
    print(f"crossover: {f}")
    print(f"  task 0: ours {100 * task0['ours']['acc']:.1f}%, theirs {100 * task0['theirs']['acc']:.1f}%; tasks 1..{a.upto}:")
    for arm, s in arms.items():
        print(f"  {arm:14s} first task's classes {' '.join(f'{100 * v:5.1f}' for v in s['first_task'])}  "
              f"newest {' '.join(f'{100 * v:5.1f}' for v in s['newest_task'])}  best val loss {s['best_val_loss'][0]:.1f}")


if __name__ == '__main__':
    main()
