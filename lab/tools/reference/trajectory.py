"""Both codes' first-task fit, step by step, from one initial network on the very same batches: how fast do their
weights drift apart, beside our own code against itself under a change that alters only rounding?

    python lab/tools/reference/trajectory.py --code ~/src/cvww_cir_horde --seed 1 --data-dir ~/data/cifar100

FZ's (and FT's) task 0 is plain cross-entropy training of a Slim ResNet-18 (width 20, the `small` preset). One fresh
network of *their* code is copied into two strategies of ours: one as the `small` preset runs it (channels_last) and a
control with channels_last off (the memory layout their network has on a CPU), which sums the same products in
another order. One epoch of our task-0 loader is drawn once (augmentation included), and every batch goes in turn to
their approach's own `train_epoch` (their Adam, weight decay and gradient clipping) and to both of ours. After chosen
steps it prints the relative distance ‖θ_a − θ_b‖ / ‖θ_b‖ of the weights (per group too: convolutions, BN affine, BN
running statistics, head in the record) for three pairs: theirs and ours, the control and ours, theirs and the
control. The record goes to `--out` (default results/reference/trajectory/).

If one step leaves theirs and the control (the same layout) ~1e-6 apart, the two codes' arithmetic agrees up to
rounding; if every pair then drifts apart at the same pace, training magnifies rounding, and runs of the two codes can
only be compared as distributions (fresh replicates, `crossover.py --state fresh`), never step by step over a fit.
"""
from __future__ import annotations
import argparse, contextlib, copy, dataclasses, datetime, io, json, os, sys, time
from pathlib import Path

if not __package__:  # run as a file: import the siblings as the package `tools.reference`, as `python -m` from the
    sys.path[0] = str(Path(__file__).resolve().parents[2]); __package__ = 'tools.reference'  # repository root would (PEP 366)
from . import run_reference as launcher, golden

OUT = Path('results') / 'reference' / 'trajectory'
WIDTH = 20  # the `small` preset's Slim ResNet-18 base width
REPORT = (1, 2, 3, 5, 10, 20, 40)  # steps printed (and the last one)
PAIRS = (('theirs', 'ours'), ('control', 'ours'), ('theirs', 'control'))  # compared: (a, b) -> ‖a − b‖ / ‖b‖


def group(k:str, v) -> str:
    "The parameter group of one state entry (our names)."
    return 'bn_stats' if 'running' in k else 'head' if k.startswith('fc') else 'bn' if v.ndim == 1 else 'conv'


def distances(a:dict, b:dict) -> dict:
    "Relative distance ‖a − b‖ / ‖b‖ of two state dicts (our names), per group and over all floating entries."
    sums = {}
    for k, v in b.items():
        if not v.is_floating_point(): continue
        for g in (group(k, v), 'all'):
            n, d = sums.get(g, (0., 0.))
            sums[g] = (n + float((a[k].float() - v.float()).norm() ** 2), d + float(v.float().norm() ** 2))
    return {g: (n / d) ** .5 for g, (n, d) in sorted(sums.items())}


def main(argv=None):
    p = argparse.ArgumentParser(prog='trajectory', description=__doc__.split('\n\n')[0])
    p.add_argument('--code', help=f"checkout of Tsebeb/cvww_cir_horde (default: ${launcher.ENV_CODE})")
    p.add_argument('--seed', type=int, default=1, help="the run's seed: its scenario, loader draws and initial network (default 1)")
    p.add_argument('--steps', type=int, default=0, help="steps to run (default: one epoch)")
    p.add_argument('--data-dir', default=os.environ.get('HORDE_DATA_DIR', 'data'), help="CIFAR-100 folder (default: $HORDE_DATA_DIR or data)")
    p.add_argument('--out', default=str(OUT), help=f"where the record goes (default {OUT})")
    a = p.parse_args(argv)
    if a.steps < 0: launcher.fail(f"--steps must be a positive count, got {a.steps}")
    code = launcher.authors_code(a.code)
    import torch
    from horde_nb.runs.spec import load_data, scenario_of
    from horde_nb.runs.runner import provenance
    from horde_nb.train.strategy import make_task, evaluate_loss
    from horde_nb.data.augment import to_device
    from horde_nb.methods.catalogue import make_strategy
    torch.set_num_threads(1)  # as the reference runs: a fixed thread count fixes the rounding
    spec = dataclasses.replace(launcher.specs(['fz'], [a.seed])[0], data_dir=a.data_dir)
    train, _ = load_data(spec)
    scen = scenario_of(spec, train)
    (x, _), y = to_device(train.x, 'cpu'), torch.as_tensor(scen.label_map)[torch.from_numpy(train.y)]
    task = make_task(scen, 0, x, y)
    cfg = dataclasses.replace(spec.train, progress=False)
    batches = [(xb.clone(), yb.clone()) for xb, yb in task.train_loader(cfg)]  # one epoch, drawn once for all three
    steps = a.steps or len(batches)
    if steps > len(batches): launcher.fail(f"--steps: one epoch has {len(batches)} batches, got {steps}")
    started, t0 = datetime.datetime.now().astimezone().isoformat(timespec='seconds'), time.perf_counter()
    with launcher.their_src(code):
        launcher.patch_cuda()
        golden.NF = WIDTH
        net = golden.their_net(task.n_seen, seed=a.seed)
        with torch.no_grad():  # `their_net` spreads BN for the golden values; a fresh network's BN instead
            for m in net.modules():
                if isinstance(m, torch.nn.BatchNorm2d): m.reset_parameters()
        appr = golden.make_appr('freezing', net, task_ce_only=True)
        sd = {golden.ours_name(k): v for k, v in net.state_dict().items()}
        ours = {}
        for name, cl in (('ours', cfg.channels_last), ('control', not cfg.channels_last)):
            s = make_strategy('fz', dataclasses.replace(cfg, channels_last=cl), spec.arch, **spec.method_kw)
            s.model.set_head(task.n_seen); s.model.load_state_dict(sd); s.to(torch.device('cpu'))
            s.n_seen, s.classes = task.n_seen, torch.arange(task.n_seen)
            ours[name] = (s, torch.optim.Adam([q for q in s.model.parameters() if q.requires_grad], lr=cfg.lr, weight_decay=cfg.weight_decay))
        one = lambda xb, yb: torch.utils.data.DataLoader(golden.Batch(xb, yb), batch_size=len(yb), shuffle=False)
        epoch = one(*map(torch.cat, zip(*batches)))  # their task set-up reads the task's classes from the whole loader
        appr.pre_train_process(0, epoch, epoch)
        appr.optimizer = appr._get_optimizer()
        for g in appr.optimizer.param_groups: g['lr'] = cfg.lr
        if (appr.wd, appr.clipgrad) != (cfg.weight_decay, 10000): launcher.fail(f"their weight decay / clipping {appr.wd, appr.clipgrad} is not the protocol's")
        rows = []
        for i, (xb, yb) in enumerate(batches[:steps], 1):
            with contextlib.redirect_stdout(io.StringIO()): appr.train_epoch(0, one(xb, yb))
            for s, opt in ours.values(): s.train_epoch([(xb, yb)], opt)
            if i in REPORT or i == steps:
                st = dict(theirs={golden.ours_name(k): v for k, v in appr.model.state_dict().items()},
                          **{n: s.model.state_dict() for n, (s, _) in ours.items()})
                rows.append(dict(step=i, **{f'{u}-{v}': distances(st[u], st[v]) for u, v in PAIRS}))
                print(f"step {i:3d}: " + '  '.join(f"{u}−{v} {rows[-1][f'{u}-{v}']['all']:.1e}" for u, v in PAIRS), flush=True)
        # what the drift does to the fit: each state's validation loss, all three scored by our control's code
        val, probe = {}, ours['control'][0]
        keep = copy.deepcopy(probe.model.state_dict())
        for n, sd_n in (('theirs', st['theirs']), ('ours', st['ours']), ('control', keep)):
            probe.model.load_state_dict(sd_n); val[n] = evaluate_loss(probe, task.val_loader(cfg))
        print('validation loss after step ' + str(steps) + ': ' + ', '.join(f"{n} {v:.4f}" for n, v in val.items()))
    command = ' '.join(['trajectory.py'] + (argv if argv is not None else sys.argv[1:]))
    record = dict(method='fz', seed=a.seed, run_id=spec.run_id, steps=steps, batch_size=cfg.batch_size, width=WIDTH,
                  channels_last=cfg.channels_last, rows=rows, val_loss=val, threads=1, provenance=provenance(command),
                  reference=dict(repository='Tsebeb/cvww_cir_horde', commit=launcher.their_commit(code)),
                  started=started, wall_s=time.perf_counter() - t0)
    out = Path(a.out).expanduser(); out.mkdir(parents=True, exist_ok=True)
    f = out / f'{spec.run_id}-task0-steps{steps}.json'
    f.write_text(json.dumps(record, indent=1))
    print(f"trajectory: {f}")


if __name__ == '__main__':
    main()
