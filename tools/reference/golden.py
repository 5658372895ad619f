"""Golden values from the authors' code (Tsebeb/cvww_cir_horde): one training step, the validation loss and the
post-task step of each method, computed by *their* approach objects from states and batches that our tests rebuild.

    python tools/reference/golden.py --code ~/src/cvww_cir_horde [--method ft,ewc] [--out nbs/golden]

For every method it builds one of their approach objects around one of their networks (their `SlimResNet18` at
width 2, so that a whole state fits in a few kilobytes), sets a known state, and runs their own code on one fixed
batch: `pre_train_process`, one `train_epoch` with their Adam (the gradients are recorded when their optimiser
steps, the loss when their criterion returns), `eval_early_stopping` and `post_train_process`. It stores, in our
parameter names, the state before, the loss terms, the gradients, the state after the step and whatever the
post-task step produced (`nbs/golden/<method>.npz`), with their commit and ours (`nbs/golden/meta.json`). The tests
in the method notebooks load the same state into our strategies and compare. Nothing here is needed to run the tests.
"""
from __future__ import annotations
import argparse, copy, datetime, json, os, subprocess, sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_reference import authors_code, their_commit, their_src, patch_cuda  # noqa: E402

OUT = Path('nbs') / 'golden'
NF, B, K0, K1 = 1, 8, 6, 10  # network width, batch size, classes after task 0 and after task 1
LR, WD = 1e-3, 1e-4
MEAN, STD = (0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761)  # their `cifar100_il2a` normalisation


def ours_name(k:str) -> str:
    "Their `CIL_Net` parameter name -> ours (`CifarResNet`): the stem, the blocks, the head."
    k = k.replace('model.conv1.', 'stem.0.').replace('model.bn1.', 'stem.1.').replace('head.', 'fc.')
    return k[len('model.'):] if k.startswith('model.') else k


def batch(seed=0) -> dict:
    "A fixed batch: B normalised 32×32 images and labels of task 0 (classes 0..K0-1) and task 1 (K0..K1-1)."
    rng = np.random.RandomState(seed)
    u8 = rng.randint(0, 256, size=(B, 32, 32, 3)).astype(np.uint8)
    x = (u8.astype(np.float32) / 255 - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return dict(x=np.ascontiguousarray(x.transpose(0, 3, 1, 2)), y0=np.arange(B) % K0, y1=K0 + np.arange(B) % (K1 - K0))


class Batch(torch.utils.data.Dataset):
    "Their code reads a task's classes from `dataset.labels`."
    def __init__(self, x, y): self.x, self.labels, self.transform = torch.as_tensor(x), torch.as_tensor(y).long(), None
    def __len__(self): return len(self.labels)
    def __getitem__(self, i): return self.x[i], self.labels[i]


def loader(x, y): return torch.utils.data.DataLoader(Batch(x, y), batch_size=B, shuffle=False)


class NullLogger:
    def log_scalar(self, *a, **k): pass


def their_net(K:int, seed:int):
    "Their `CIL_Net` around their `SlimResNet18` at width NF, head of K classes, BN statistics made non-trivial."
    import importlib
    cn, sr = importlib.import_module('networks.cil_network'), importlib.import_module('networks.slimresnet18')  # the modules, not the functions of that name
    torch.manual_seed(seed)
    net = cn.CIL_Net.__new__(cn.CIL_Net); nn.Module.__init__(net)
    net.network_name, net.model = 'slimresnet18', sr.SlimResNet18(sr.BasicBlock, [2, 2, 2, 2], 100, NF)
    net.model.linear, net.head_class, net.out_size, net.head = nn.Sequential(), nn.Linear, 8 * NF, None
    net.modify_head(K)
    with torch.no_grad():  # BN at its initial 1/0/0/1 would hide a mix-up of weight, bias, mean and variance
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5); m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2); m.running_var.uniform_(0.5, 1.5)
    return net


def state(net) -> dict: return {ours_name(k): v.detach().clone().numpy() for k, v in net.state_dict().items()}


def step(appr, t, x, y) -> dict:
    "Their pre_train_process and one train_epoch on the batch: loss (as their criterion returns it), gradients, new state."
    dl = loader(x, y)
    appr.pre_train_process(t, dl, dl)
    appr.optimizer = appr._get_optimizer()
    for g in appr.optimizer.param_groups: g['lr'] = LR
    seen = {}
    step0 = appr.optimizer.step
    def record_step(*a, **k):
        seen['grad'] = {ours_name(n): p.grad.detach().clone().numpy() for n, p in appr.model.named_parameters() if p.grad is not None}
        return step0(*a, **k)
    appr.optimizer.step = record_step
    names = [n for n in ('train_criterion', 'criterion') if hasattr(appr, n)][:1]  # what their train_epoch calls
    crit0 = getattr(appr, names[0])
    def record_loss(*a, **k):
        out = crit0(*a, **k)
        seen.setdefault('loss', [float(v) for v in out] if isinstance(out, tuple) else [float(out)])  # total first, then terms
        return out
    setattr(appr, names[0], record_loss)
    try: appr.train_epoch(t, dl)
    finally: delattr(appr, names[0])
    return dict(loss=seen['loss'], grad=seen['grad'], after=state(appr.model))


def flat(prefix, d:dict) -> dict:
    "A named set of float32 tensors stored as one vector (one array per set keeps the file small) and its layout's id."
    layout = json.dumps([[k, list(np.shape(v))] for k, v in d.items()])
    LAYOUTS[prefix] = SHAPES.setdefault(layout, f'L{len(SHAPES)}')
    return {prefix: np.concatenate([np.asarray(v, np.float32).ravel() for v in d.values()]) if d else np.zeros(0, np.float32)}

LAYOUTS = {}  # prefix -> layout id, for the method being generated
SHAPES = {}   # layout (JSON of [[name, shape], ...]) -> id, shared by all methods (meta.json 'layouts')


def make_appr(module:str, net, **kw):
    import importlib
    from datasets.exemplars_dataset import ExemplarsDataset
    Appr = importlib.import_module(f'approach.{module}').Appr
    ex = Appr.exemplars_dataset_class()
    ex = ex(None, None) if ex is not None else None
    return Appr(net, 'cpu', nepochs=[1], lr=[LR], lr_min=1e-5, lr_factor=10, lr_patience=3, clipgrad=10000, momentum=0.9,
                wd=WD, logger=NullLogger(), exemplars_dataset=ex, use_early_stopping=True, **kw)


def two_tasks(module:str, post=None, **kw) -> dict:
    "Task 0's step, validation loss and post-task step, then task 1's (a grown, perturbed state) of a CE-family method."
    b, out = batch(), {}
    net = their_net(K0, seed=1)
    appr = make_appr(module, net, **kw)
    out.update(flat('t0/before', state(net)))
    s0 = step(appr, 0, b['x'], b['y0'])
    out.update({'t0/loss': s0['loss'], **flat('t0/grad', s0['grad']), **flat('t0/after', s0['after'])})
    out['t0/val_loss'] = appr.eval_early_stopping(0, loader(b['x'], b['y0']))[0]
    appr.post_train_process(0, loader(b['x'], b['y0']), loader(b['x'], b['y0']))
    if post: out.update(post(appr))
    torch.manual_seed(2)
    net.modify_head(K1)
    with torch.no_grad():  # away from the post-task anchor, so that regularisers pull
        for p in net.parameters(): p.add_(0.05 * torch.randn_like(p))
    out.update(flat('t1/before', state(net)))
    s1 = step(appr, 1, b['x'], b['y1'])
    out.update({'t1/loss': s1['loss'], **flat('t1/grad', s1['grad']), **flat('t1/after', s1['after'])})
    out['t1/val_loss'] = appr.eval_early_stopping(1, loader(b['x'], b['y1']))[0]
    return out


def importance_of(attr):
    return lambda appr: flat('t0/importance', {ours_name('model.' + n): v.numpy() for n, v in getattr(appr, attr).items()})


def lwf_targets(appr):
    return {'t0/old_logits': appr.model_old(torch.as_tensor(batch()['x'])).detach().numpy()}


GENERATORS = dict(
    ft=lambda: two_tasks('finetuning', task_ce_only=True),
    fz=lambda: two_tasks('freezing', task_ce_only=True),
    joint=lambda: two_tasks('joint'),
    ewc=lambda: two_tasks('ewc', importance_of('fisher'), lamb=40000., alpha=0.1, task_ce_only=True),
    mas=lambda: two_tasks('mas', importance_of('importance'), lamb=10., alpha=0.1, task_ce_only=True),
    lwf=lambda: two_tasks('lwf', lwf_targets, lamb=30., T=2),
)


def main(argv=None):
    p = argparse.ArgumentParser(prog='golden', description=__doc__.split('\n\n')[0])
    p.add_argument('--code', help="checkout of Tsebeb/cvww_cir_horde (default: $HORDE_REFERENCE_CODE)")
    p.add_argument('--method', default=','.join(GENERATORS), help=f"methods, comma-separated (default all: {', '.join(GENERATORS)})")
    p.add_argument('--out', default=str(OUT), help=f"fixture folder (default {OUT})")
    a = p.parse_args(argv)
    code = authors_code(a.code)
    methods = [m for m in a.method.split(',') if m]
    bad = [m for m in methods if m not in GENERATORS]
    if bad: sys.exit(f"golden: error: no generator for {bad}; known: {', '.join(GENERATORS)}")
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    meta_p = out / 'meta.json'
    meta = json.loads(meta_p.read_text()) if meta_p.exists() else {}
    SHAPES.update({json.dumps(v): k for k, v in meta.get('layouts', {}).items()})  # keep the ids other fixtures use
    ours = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True).stdout.strip()
    with their_src(code):
        patch_cuda()
        for m in methods:
            LAYOUTS.clear()
            vals = GENERATORS[m]()
            np.savez_compressed(out / f'{m}.npz', **{k: np.asarray(v) for k, v in vals.items()})
            meta[m] = dict(their_commit=their_commit(code), our_commit=ours, torch=torch.__version__, width=NF, batch=B,
                           classes=[K0, K1], lr=LR, weight_decay=WD, layouts=dict(LAYOUTS),
                           generated=datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
                           command=' '.join(['golden.py'] + (argv if argv is not None else sys.argv[1:])))
            print(f"{m}: {len(vals)} arrays, {(out / f'{m}.npz').stat().st_size / 1024:.0f} KiB")
    known = {v: json.loads(k) for k, v in SHAPES.items()}
    meta['layouts'] = {**{k: v for k, v in meta.get('layouts', {}).items()}, **known}
    b = batch()
    np.savez_compressed(out / 'batch.npz', x=b['x'], y0=b['y0'], y1=b['y1'])  # the one batch every fixture was computed on
    meta_p.write_text(json.dumps(meta, sort_keys=True, separators=(',', ':')) + '\n')


if __name__ == '__main__':
    main()
