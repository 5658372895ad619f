"""Golden values from the authors' code (Tsebeb/cvww_cir_horde): one training step, the validation loss and the
post-task step of each method, computed by *their* approach objects from states and batches that our tests rebuild.

    python lab/tools/reference/golden.py --code ~/src/cvww_cir_horde [--method ft,ewc] [--out nbs/golden]

For every method it builds one of their approach objects around one of their networks (their `SlimResNet18` at
width 1, so that a whole state fits in a few kilobytes), sets a known state, and runs their own code on one fixed
batch: `pre_train_process`, one `train_epoch` with their Adam (the gradients are recorded when their optimiser
steps, the loss when their criterion returns), `eval_early_stopping` and `post_train_process`. It stores, in our
parameter names, the state before, the loss terms, the gradients, the state after the step and whatever the
post-task step produced (`nbs/golden/<method>.npz`), with their commit and ours (`nbs/golden/meta.json`). The tests
in the method notebooks load the same state into our strategies and compare. Nothing here is needed to run the tests.
"""
from __future__ import annotations
import argparse, contextlib, datetime, hashlib, importlib, json, random, subprocess, sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

if not __package__:  # run as a file: import the siblings as the package `tools.reference`, as `python -m` from the
    sys.path[0] = str(Path(__file__).resolve().parents[2]); __package__ = 'tools.reference'  # repository root would (PEP 366)
from .run_reference import authors_code, their_commit, their_src, patch_cuda  # noqa: E402
from horde_nb.runs.store import portable_text  # noqa: E402  (meta.json's command names no folder of one machine)

OUT = Path('nbs') / 'golden'
NF, B, K0, K1 = 1, 12, 6, 10  # network width, batch size, classes after task 0 and after task 1
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


def slim_backbone():
    "Their `SlimResNet18` at width NF, its own classifier removed (as `CIL_Net` does)."
    sr = importlib.import_module('networks.slimresnet18')  # the module, not the function of that name
    net = sr.SlimResNet18(sr.BasicBlock, [2, 2, 2, 2], 100, NF)
    net.linear = nn.Sequential()
    return net


def ssre_backbone():
    "Their SSRE ResNet at width NF (its first BatchNorm given the network's width, as the runner's patch does)."
    m = importlib.import_module('networks.resnet_18_ssre_with_bn')
    net = m.ResNet(m.BasicBlock, [2, 2, 2, 2], nf=NF, mode='parallel_adapters')
    net.bn1, net.fc = nn.BatchNorm2d(NF), nn.Sequential()
    net.switch('normal')  # as `SSRE_Net.__init__`
    return net


def their_net(K:int, seed:int, wrapper:str='networks.cil_network:CIL_Net', backbone=slim_backbone, **attrs):
    "Their network wrapper (`CIL_Net` or a method's subclass) around their backbone at width NF, head of K classes."
    mod, name = wrapper.split(':')
    cls = getattr(importlib.import_module(mod), name)
    torch.manual_seed(seed)
    net = cls.__new__(cls); nn.Module.__init__(net)
    for k, v in attrs.items(): setattr(net, k, v)  # what the subclass's __init__ would set besides CIL_Net's
    net.network_name, net.model = 'slimresnet18', backbone()
    net.head_class, net.out_size, net.head = nn.Linear, 8 * NF, None
    net.modify_head(K)
    with torch.no_grad():  # BN at its initial 1/0/0/1 would hide a mix-up of weight, bias, mean and variance
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5); m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2); m.running_var.uniform_(0.5, 1.5)
    return net


NAMES = [ours_name]  # the parameter-name mapping of the method being generated (a stack of one)

def state(net) -> dict: return {NAMES[0](k): v.detach().clone().numpy() for k, v in net.state_dict().items()}


def step(appr, t, x, y, loss_fn:str=None) -> dict:
    "Their pre_train_process and one train_epoch on the batch: loss (as their loss function returns it), gradients, new state."
    dl = loader(x, y)
    appr.pre_train_process(t, dl, dl)
    start = state(appr.model)  # what the step starts from (a method may grow its heads in pre_train_process)
    appr.optimizer = appr._get_optimizer()
    for g in appr.optimizer.param_groups: g['lr'] = LR
    seen = {}
    step0 = appr.optimizer.step
    def record_step(*a, **k):
        seen['grad'] = {NAMES[0](n): p.grad.detach().clone().numpy() for n, p in appr.model.named_parameters()
                        if p.grad is not None and p.requires_grad}  # a frozen parameter may keep an old gradient
        return step0(*a, **k)
    appr.optimizer.step = record_step
    names = [loss_fn] if loss_fn else [n for n in ('train_criterion', 'criterion') if hasattr(appr, n)][:1]  # what train_epoch calls
    crit0 = getattr(appr, names[0])
    def record_loss(*a, **k):
        out = crit0(*a, **k)
        vals = out if isinstance(out, tuple) else (out,)
        seen.setdefault('loss', [float(v) for v in vals if torch.is_tensor(v) and v.numel() == 1])  # total first, then terms
        return out
    setattr(appr, names[0], record_loss)
    try: appr.train_epoch(t, dl)
    finally: delattr(appr, names[0])
    return dict(loss=seen['loss'], grad=seen['grad'], after=state(appr.model), start=start)


def flat(prefix, d:dict) -> dict:
    "A named set of float32 tensors stored as one vector (one array per set keeps the file small) and its layout's id."
    layout = json.dumps([[k, list(np.shape(v))] for k, v in d.items()])
    LAYOUTS[prefix] = SHAPES.setdefault(layout, f'L{len(SHAPES)}')
    return {prefix: np.concatenate([np.asarray(v, np.float32).ravel() for v in d.values()]) if d else np.zeros(0, np.float32)}

LAYOUTS = {}  # prefix -> layout id, for the method being generated
SHAPES = {}   # layout (JSON of [[name, shape], ...]) -> id, shared by all methods (meta.json 'layouts')


def make_appr(module:str, net, **kw):
    Appr = importlib.import_module(f'approach.{module}').Appr
    ex = Appr.exemplars_dataset_class()
    ex = ex(None, None) if ex is not None else None
    args = dict(nepochs=[1], lr=[LR], lr_min=1e-5, lr_factor=10, lr_patience=3, clipgrad=10000, momentum=0.9, wd=WD,
                logger=NullLogger(), exemplars_dataset=ex, use_early_stopping=True)
    return Appr(net, 'cpu', **{**args, **kw})


def two_tasks(module:str, post=None, after=None, net_kw={}, loss_fn=None, **kw) -> dict:
    "Task 0's step, validation loss and post-task step, then task 1's (a grown, perturbed state); `after` runs on task 1's result."
    b, out = batch(), {}
    net = their_net(K0, seed=1, **net_kw)
    appr = make_appr(module, net, **kw)
    out.update(flat('t0/before', state(net)))
    s0 = step(appr, 0, b['x'], b['y0'], loss_fn)
    out.update({'t0/loss': s0['loss'], **flat('t0/grad', s0['grad']), **flat('t0/after', s0['after'])})
    out['t0/val_loss'] = appr.eval_early_stopping(0, loader(b['x'], b['y0']))[0]
    appr.post_train_process(0, loader(b['x'], b['y0']), loader(b['x'], b['y0']))
    if post: out.update(post(appr))
    torch.manual_seed(2)
    net.modify_head(K1)
    with torch.no_grad():  # away from the post-task anchor, so that regularisers pull
        for p in net.parameters(): p.add_(0.05 * torch.randn_like(p))
    out.update(flat('t1/before', state(net)))
    s1 = step(appr, 1, b['x'], b['y1'], loss_fn)
    out.update({'t1/loss': s1['loss'], **flat('t1/grad', s1['grad']), **flat('t1/after', s1['after'])})
    out['t1/val_loss'] = appr.eval_early_stopping(1, loader(b['x'], b['y1']))[0]
    if after: out.update(after(appr))
    out.update(eval_logits(appr))
    return out


def eval_logits(appr) -> dict:
    "The logits their evaluation scores (`Inc_Learning_Appr.eval`: the model's output in eval mode), after task 1."
    appr.model.eval()
    with torch.no_grad(): return {'t1/logits': appr.model(torch.as_tensor(batch()['x'])).numpy()}


def importance_of(attr):
    return lambda appr: flat('t0/importance', {ours_name('model.' + n): v.numpy() for n, v in getattr(appr, attr).items()})


def lwf_targets(appr):
    return {'t0/old_logits': appr.model_old(torch.as_tensor(batch()['x'])).detach().numpy()}


def pass_name(k:str) -> str:
    "Their `PASS_Net` name -> ours (`ModuleDict(backbone, orient, head)`)."
    k = k.replace('orientation_class_head.', 'orient.')
    if k.startswith('model.'): return 'backbone.' + ours_name(k)
    return k


@contextlib.contextmanager
def recorded_draws(into:list):
    "Record their numpy draws in order: the first entry after each shuffle, normal vectors, randint, beta, random."
    names = dict(shuffle='index', normal='noise', randint='row', beta='lam', random='coin')
    saved = {n: getattr(np.random, n) for n in names}
    def wrap(n, f):
        def g(*a, **k):
            v = f(*a, **k)
            into.append((names[n], a[0][0] if n == 'shuffle' else v))
            return v
        return g
    for n, f in saved.items(): setattr(np.random, n, wrap(n, f))
    try: yield into
    finally:
        for n, f in saved.items(): setattr(np.random, n, f)


def pass_golden() -> dict:
    "PASS: task 0's step (rotations, CE/τ), prototypes, radius and collapsed head; task 1's step and validation with their draws."
    NAMES[0] = pass_name
    try:
        b, out = batch(), {}
        net = their_net(K0, seed=1, wrapper='networks.pass_network:PASS_Net', orientation_class_head=None, _orientation_scale_factor=4)
        appr = make_appr('pass', net, protoaug_weight=10., kd_weight=10., temp=0.1)
        out.update(flat('t0/before', state(net)))
        s0 = step(appr, 0, b['x'], b['y0'], '_compute_loss')
        out.update({'t0/loss': s0['loss'], **flat('t0/grad', s0['grad']), **flat('t0/after', s0['after'])})
        out['t0/val_loss'] = appr.eval_early_stopping(0, loader(b['x'], b['y0']))[0]
        appr.post_train_process(0, loader(b['x'], b['y0']), loader(b['x'], b['y0']))
        out.update({'t0/prototypes': np.asarray(appr.prototype), 't0/proto_labels': np.asarray(appr.class_label), 't0/radius': appr.radius,
                    **flat('t0/collapsed', {'head.weight': net.head.weight.detach().numpy(), 'head.bias': net.head.bias.detach().numpy()})})
        torch.manual_seed(2)
        net.modify_head(K1)
        with torch.no_grad():
            for p in net.parameters(): p.add_(0.05 * torch.randn_like(p))
        out.update(flat('t1/before', state(net)))
        draws = []
        with recorded_draws(draws): s1 = step(appr, 1, b['x'], b['y1'], '_compute_loss')
        n = len(draws)
        with recorded_draws(draws): out['t1/val_loss'] = appr.eval_early_stopping(1, loader(b['x'], b['y1']))[0]
        for part, ds in (('train', draws[:n]), ('val', draws[n:])):
            out[f't1/draws_{part}_index'] = np.array([v for k, v in ds if k == 'index'])
            out[f't1/draws_{part}_noise'] = np.stack([v for k, v in ds if k == 'noise'])
        out.update({'t1/loss': s1['loss'], **flat('t1/grad', s1['grad']), **flat('t1/after', s1['after'])})
        appr.post_train_process(1, loader(b['x'], b['y1']), loader(b['x'], b['y1']))  # the collapse before evaluation
        out.update(eval_logits(appr))
        return out
    finally: NAMES[0] = ours_name


@contextlib.contextmanager
def recorded_torch_perms(into:list):
    "Record the permutations their classAug draws (torch.randperm), with the numpy draws of `recorded_draws`."
    randperm0 = torch.randperm
    def randperm(n, *a, **k): v = randperm0(n, *a, **k); into.append(('perm', v.clone().numpy())); return v
    torch.randperm = randperm
    try:
        with recorded_draws(into): yield into
    finally: torch.randperm = randperm0


def il2a_golden() -> dict:
    """IL2A: task 0's step with classAug (their permutations and λ recorded), prototypes and covariances, the shrunk head;
    task 1's step and validation with their classAug and prototype draws."""
    NAMES[0] = pass_name  # backbone.* and head.*, as our prototype strategies name them
    b, out = batch(), {}
    net = their_net(K0, seed=1, wrapper='networks.il2a_network:IL2ANet')
    appr = make_appr('il2a', net, seman_weight=10., kd_weight=10., temp=0.1, class_aug_alpha=20., class_aug_num_mixups=4,
                     seman_aug_ratio=2.5)
    def draws_of(key, part, ds):
        if key == 'perm': out[f'{part}_perm'] = np.stack([v for k, v in ds if k == 'perm'])
        else: out[f'{part}_{key}'] = np.array([v for k, v in ds if k == key])
    for t, y in ((0, b['y0']), (1, b['y1'])):
        if t == 1:
            torch.manual_seed(2)
            with torch.no_grad():
                for p in net.parameters(): p.add_(0.05 * torch.randn_like(p))
        ds = []
        with recorded_torch_perms(ds): s_ = step(appr, t, b['x'], y, '_compute_loss')
        out.update(flat(f't{t}/before', s_['start']))  # after their pre_train_process grew the head (pair outputs)
        for key in ('perm', 'lam', 'index'): draws_of(key, f't{t}/draws_train', ds)
        out.update({f't{t}/loss': s_['loss'], **flat(f't{t}/grad', s_['grad']), **flat(f't{t}/after', s_['after'])})
        ds = []
        with recorded_torch_perms(ds): out[f't{t}/val_loss'] = appr.eval_early_stopping(t, loader(b['x'], y))[0]
        for key in ('perm', 'lam', 'index'): draws_of(key, f't{t}/draws_val', ds)
        if t == 0:
            grown = state(net)  # the head of task 0 with its pair outputs, before post_train_process shrinks it
            appr.post_train_process(0, loader(b['x'], y), loader(b['x'], y))
            out.update({'t0/prototypes': np.asarray(appr.prototype), 't0/covariances': np.asarray(appr.cov),
                        't0/proto_labels': np.asarray(appr.class_label),
                        **flat('t0/shrunk', {'head.weight': net.head.weight.detach().numpy(), 'head.bias': net.head.bias.detach().numpy()})})
            out['t0/grown_outputs'] = grown['head.weight'].shape[0]
    appr.post_train_process(1, loader(b['x'], b['y1']), loader(b['x'], b['y1']))  # the shrink before evaluation
    out.update(eval_logits(appr))
    NAMES[0] = ours_name
    return {k: v for k, v in out.items() if np.size(v)}


def praka_golden() -> dict:
    """PRAKA: task 0's step (rotations, joint and single heads, the self-distillation), prototypes; task 1's step and
    validation with their prototype mixes (row, class, λ and side drawn per batch image, recorded in order)."""
    NAMES[0] = pass_name
    try:
        b, out = batch(), {}
        net = their_net(K0, seed=1, wrapper='networks.praka_network:PRAKA_Net', orientation_class_head=None, _orientation_scale_factor=4)
        appr = make_appr('praka', net, protoaug_weight=15., kd_weight=15., temp=0.1, use_cosine_annealing_scheduler=False,
                         cosine_annealing_rate=32)
        for t, y in ((0, b['y0']), (1, b['y1'])):
            if t == 1:
                torch.manual_seed(2)
                net.modify_head(K1)
                with torch.no_grad():
                    for p in net.parameters(): p.add_(0.05 * torch.randn_like(p))
            ds = []
            with recorded_draws(ds): s_ = step(appr, t, b['x'], y, '_compute_loss')
            out.update({**flat(f't{t}/before', s_['start']), f't{t}/loss': s_['loss'], **flat(f't{t}/grad', s_['grad']),
                        **flat(f't{t}/after', s_['after'])})
            if ds: out[f't{t}/draws_train'] = np.array([[float(v) for _, v in ds[i:i + 4]] for i in range(0, len(ds), 4)])
            ds = []
            with recorded_draws(ds): out[f't{t}/val_loss'] = appr.eval_early_stopping(t, loader(b['x'], y))[0]
            if ds: out[f't{t}/draws_val'] = np.array([[float(v) for _, v in ds[i:i + 4]] for i in range(0, len(ds), 4)])
            if t == 0:
                appr.post_train_process(0, loader(b['x'], y), loader(b['x'], y))
                out['t0/prototypes'] = np.stack([appr.prototype[c] for c in sorted(appr.prototype)])
        out.update(eval_logits(appr))
        return out
    finally: NAMES[0] = ours_name


def ssre_name(k:str) -> str:
    "Their `SSRE_Net` name -> ours (`SSREResNet`): the biased stem, adapters kept, the BN-free projection shortcut."
    k = k.replace('model.conv1.', 'stem.0.').replace('model.bn1.', 'stem.1.').replace('downsample.0.', 'shortcut.').replace('head.', 'fc.')
    return k[len('model.'):] if k.startswith('model.') else k


def ssre_golden() -> dict:
    """SSRE: task 0's step, prototypes; task 1 with adapters, frozen BN, similarity-weighted CE/KD and their prototype draws;
    the merged network after task 1."""
    NAMES[0] = ssre_name
    try:
        b, out = batch(), {}
        net = their_net(K0, seed=1, wrapper='networks.ssre_network:SSRE_Net', backbone=ssre_backbone,
                        pretrained=False, remove_existing_head=True)
        appr = make_appr('ssre', net, initial_batch_size=B, protoaug_weight=10., kd_weight=1., temp=0.1)
        for t, y in ((0, b['y0']), (1, b['y1'])):
            if t == 1:
                torch.manual_seed(2)
                net.modify_head(K1)
                with torch.no_grad():
                    for n_, p in net.named_parameters():
                        if 'adapter' not in n_: p.add_(0.05 * torch.randn_like(p))  # the adapters keep their initial draw
            ds = []
            with recorded_draws(ds): s_ = step(appr, t, b['x'], y, '_compute_loss')
            out.update({**flat(f't{t}/before', s_['start']), f't{t}/loss': s_['loss'], **flat(f't{t}/grad', s_['grad']),
                        **flat(f't{t}/after', s_['after'])})
            if ds: out[f't{t}/draws_train_index'] = np.array([v for _, v in ds])
            ds = []
            with recorded_draws(ds): out[f't{t}/val_loss'] = appr.eval_early_stopping(t, loader(b['x'], y))[0]
            if ds: out[f't{t}/draws_val_index'] = np.array([v for _, v in ds])
            appr.post_train_process(t, loader(b['x'], y), loader(b['x'], y))
            out[f't{t}/prototypes'] = np.asarray(appr.prototype)
            if t == 1: out.update(flat('t1/merged', state(net)))
        out.update(eval_logits(appr))
        return out
    finally: NAMES[0] = ours_name


class Scalars:
    "Their logger, recording: (name, value) of every `log_scalar` call in order."
    def __init__(self): self.seen = []
    def log_scalar(self, task, iter, name, value, group=None, **k): self.seen.append((name, float(value)))
    def values(self, name): return [v for n, v in self.seen if n == name]


class Indexed(Batch):
    "A `Batch` that writes down the positions read while `on` (their pseudo-feature draw reads one image at a time)."
    def __init__(self, x, y): super().__init__(x, y); self.on, self.read = False, []
    def __getitem__(self, i):
        if self.on: self.read.append(int(i))
        return super().__getitem__(i)


FE_STEPS = 5  # one full Lookahead cycle (k = 5): the fifth step pulls the weights back towards the first

def fetril_golden() -> dict:
    """FeTrIL: task 0's feature-extractor training (CE on raw features, Adam in their Lookahead: FE_STEPS steps, the
    validation loss after each), the class means, one step of the head on the L2-normalised features, its validation;
    task 1 (two new classes and class 0 again) with the pseudo-features their cosine rule and sampler chose, the head's
    step and validation, and the evaluation logits. The transforms are the identity (the batch is already
    normalised); one batch holds the whole task, so every epoch is one step."""
    ft = importlib.import_module('approach.fetril')
    b, out = batch(), {}
    y1 = np.array([K0, K0 + 1, 0] * (B // 3))  # 4 images each; classes 1..5 are absent, class 0 repeats
    big = lambda x, y: torch.utils.data.DataLoader(Indexed(x, y), batch_size=64, shuffle=False)  # one batch per epoch
    net = their_net(K0, seed=1, wrapper='networks.fetril_network:FetrilNet', l2_norm=True, classifier_type='fc',
                    _svc_tol=1e-4, _svc_reg=1.)
    log = Scalars()
    appr = make_appr('fetril', net, class_sim_method='cosine', fe_lr=[LR], fe_epochs=[FE_STEPS], k_nearest_classes=1,
                     lucir_pretrain_model='none', lucir_fe_lr=[], lucir_fe_epochs=[], lucir_batch_size=B,
                     fe_data_augment='train', test_augment='train', lr_patience=10, logger=log)  # no decay in FE_STEPS epochs
    seen = {}
    class Recorded(ft.Lookahead):  # their Lookahead, with the first step's gradients written down
        def step(self, closure=None):
            seen.setdefault('fe_grad', {NAMES[0](n): p.grad.detach().clone().numpy() for n, p in net.named_parameters()})
            return super().step(closure)
    ce0 = torch.nn.functional.cross_entropy
    def ce(*a, **k):
        v = ce0(*a, **k)
        if v.requires_grad: seen.setdefault('fe_loss', []).append(float(v.detach()))
        return v
    get_opt0 = appr._get_optimizer
    def get_opt():  # the head's Adam, with the gradients of its one step written down
        opt = get_opt0(); step0 = opt.step
        def step(*a, **k):
            seen['head_grad'] = {NAMES[0]('head.' + n): p.grad.detach().clone().numpy() for n, p in net.head.named_parameters()}
            return step0(*a, **k)
        opt.step = step
        return opt
    appr._get_optimizer = get_opt
    crit0 = appr.criterion
    def crit(*a, **k):
        v = crit0(*a, **k); seen.setdefault('head_loss', float(v)); return v  # the first call: the training step
    appr.criterion = crit
    pseudo0 = appr._transform_features
    for t, y in ((0, b['y0']), (1, y1)):
        dl = big(b['x'], y)
        if t == 1:
            torch.manual_seed(2)
            net.modify_head(K0 + 2)
            out.update({'t1/y': y1, **flat('t1/before', state(net))})
        else: out.update(flat('t0/before', state(net)))
        seen.pop('head_loss', None)
        ft.Lookahead, torch.nn.functional.cross_entropy = Recorded, ce
        try: appr.pre_train_process(t, dl, dl)  # task 0: their feature-extractor training
        finally: ft.Lookahead, torch.nn.functional.cross_entropy = Recorded.__mro__[1], ce0
        if t == 0:
            out.update({'t0/fe_loss': seen['fe_loss'], **flat('t0/fe_grad', seen['fe_grad']), **flat('t0/fe_after', state(net)),
                        't0/fe_val': log.values('FE Training_fe_loss')})
        def pseudo(loader):
            loader.dataset.on = True
            try: pf, pt = pseudo0(loader)
            finally: loader.dataset.on = False
            if pf: out.update({'t1/pseudo': torch.cat(pf).detach().numpy(), 't1/pseudo_targets': torch.cat(pt).numpy(),
                               't1/pseudo_images': np.array(loader.dataset.read)})
            return pf, pt
        appr._transform_features = pseudo
        n_val = len(log.values('loss'))
        appr.train_loop(t, dl, dl)  # means, features, pseudo-features, one epoch of the head, its validation
        out.update({f't{t}/means': appr.mean_embedding.numpy().copy(), f't{t}/head_loss': seen['head_loss'],
                    **flat(f't{t}/head_grad', seen['head_grad']),
                    **flat(f't{t}/head_after', {NAMES[0]('head.' + k): v.detach().numpy().copy() for k, v in net.head.state_dict().items()}),
                    f't{t}/head_val': log.values('loss')[n_val:]})
        appr.post_train_process(t, dl, dl)
    net.eval()
    with torch.no_grad(): out['t1/logits'] = net(torch.as_tensor(b['x'])).numpy()
    return out


N_FE, ML_DIMS = 3, 16  # the initial FE and two slots; a small metric-learning head

def fe_name(k:str) -> str: return ours_name('model.' + k)  # a bare backbone's names

# their Horde's settings as the paper's runs set them (besides the learning rates, epochs and growth rule)
HORDE_KW = dict(training_method='ce_ml', use_adaptive_alpha=False, alpha=0.5, ml_dims=ML_DIMS, ignore_unhelpful_train=False,
                ml_margin=0.5, ml_pair_selector='hard_negative', acc_thr=1.0, project_unk_mean='feats', project_unk_std=1.0,
                use_curr_cls_ph2=False, num_sim_feats=1, num_iterations_for_mean=1, fe_conf_strong_factor=2.0,
                min_fe_improve_score_per_class=0.15, use_lwf_fe=False, fe_lwf_lamb=0.5, fe_lwf_T=2, warmup_epochs=5,
                use_self_supervision=True, fe_dist_overlap_min_class_overlap=0.1, acc_prototype=True)


def horde_net(n_fe:int=N_FE):
    "Their `InitHordeModel` (a linear head on the initial FE and n_fe - 1 slots), its FEs their `SlimResNet18` at width NF."
    m = importlib.import_module('networks.init_horde_network')
    net = m.InitHordeModel.__new__(m.InitHordeModel); nn.Module.__init__(net)
    net.initial_network_name = net.network_name = 'slimresnet18'
    net.pretrained, net.remove_existing_head = False, True
    net.number_of_feature_extractors, net.initial_feature_extractor, net.feature_extractors = n_fe - 1, None, nn.ModuleList()
    net.hidden_dim_size, net.dropout, net.activation, net.linear = -1, 0., 'relu', None
    net._InitHordeModel__old_size = 0
    net.head_class, net.out_size, net.init_out_size = nn.Linear, 8 * NF, 8 * NF
    return net


def fresh_fe():
    "A new FE as their `get_initial_model`/`get_fe_model` make it, BN statistics moved off 1/0 (see `their_net`)."
    fe = slim_backbone()
    with torch.no_grad():
        for m in fe.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5); m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2); m.running_var.uniform_(0.5, 1.5)
    return fe


def horde_golden() -> dict:
    """Horde (both growth rules): task 0's initial-FE training step (CE on 4 rotations + contrastive with hard negatives,
    their fresh heads recorded), its validation terms, the initial-FE statistics, one step of the unified head and its
    validation; task 1 (classes 0, 6, 7): Horde_m's decision, the slot FE's step, the statistics, the head's step and
    validation with their projection draws (target class and noise per sample); the evaluation logits; Horde_c's score
    and decision, and Horde_m's, on hand-made states."""
    hm = importlib.import_module('approach.initial_horde')
    b, out = batch(), {}
    y1 = np.array([0, K0, K0 + 1] * (B // 3))  # first appearance in sorted order, as our task-local labels
    big = lambda x, y: torch.utils.data.DataLoader(Batch(x, y), batch_size=64, shuffle=False)
    out['t1/y'] = y1
    net = horde_net()
    appr = make_appr('initial_horde', net, **HORDE_KW, fe_lr=[LR], fe_epochs=[1], fe_selection='max_classes', logger=Scalars())
    made, seen = [], {}
    def new_fe():
        fe = fresh_fe(); made.append(('fe', fe, {fe_name(k): v.clone().numpy() for k, v in fe.state_dict().items()})); return fe
    net.get_initial_model = net.get_fe_model = new_fe
    def linear(*a, **k):
        lin = nn.Linear(*a, **k); made.append(('head', lin, {k_: v.clone().numpy() for k_, v in lin.state_dict().items()})); return lin
    class Adam(torch.optim.Adam):  # the FE optimiser: gradients of its one step
        def step(self, closure=None):
            seen['fe_grad'] = {n: p.grad.detach().clone().numpy() for n, p in fe_params() if p.grad is not None}
            return super().step(closure)
    def fe_params():
        fe, ce, ml = made[-3][1], made[-2][1], made[-1][1]
        return [*((fe_name(n), p) for n, p in fe.named_parameters()), *((f'ce.{n}', p) for n, p in ce.named_parameters()),
                *((f'ml.{n}', p) for n, p in ml.named_parameters())]
    ce0, cl0 = torch.nn.functional.cross_entropy, appr.contrastive_loss
    def ce(*a, **k):
        v = ce0(*a, **k); seen.setdefault('ce', []).append((float(v.detach()), v.requires_grad)); return v
    def cl(*a, **k):
        v = cl0(*a, **k); seen.setdefault('ml', []).append((float(v.detach()), v.requires_grad)); return v
    # the head's step: its optimiser's gradients, the loss it stepped on, the features and the projection draws
    get_opt0 = appr._get_optimizer
    def get_opt():
        opt = get_opt0(); step0 = opt.step
        def step(*a, **k):
            seen['head_grad'] = {f'head.{n}': p.grad.detach().clone().numpy() for n, p in net.linear.named_parameters()}
            return step0(*a, **k)
        opt.step = step
        return opt
    appr._get_optimizer = get_opt
    fwd0 = net.forward
    def forward(x, return_features=False):
        o, f = fwd0(x, return_features=True)
        seen.setdefault('features', []).append(f.detach().clone().numpy())
        return (o, f) if return_features else o
    net.forward = forward
    def head_input(module, args):  # one projected feature per call (num_sim_feats = 1); the real features come as a batch
        if len(args[0]) == 1: seen.setdefault('pseudo', []).append(args[0][0].detach().clone().numpy())
    shuffle0, randn0 = hm.shuffle, torch.randn
    def shuffle(xs): shuffle0(xs); seen.setdefault('targets', []).append(xs[0])
    def randn(*a, **k):
        v = randn0(*a, **k)
        if tuple(a[0] if len(a) == 1 else a) == (N_FE - 1, 8 * NF): seen.setdefault('noise', []).append(v.clone().numpy())
        return v
    crit0 = appr.criterion
    def crit(*a, **k): v = crit0(*a, **k); seen.setdefault('head_ce', []).append(float(v.detach())); return v
    appr.criterion = crit

    def fe_part(t):
        fe, ce_h, ml_h = made[-3], made[-2], made[-1]
        before = {**fe[2], **{f'ce.{k}': v for k, v in ce_h[2].items()}, **{f'ml.{k}': v for k, v in ml_h[2].items()}}
        after = {**{fe_name(k): v.numpy() for k, v in fe[1].state_dict().items()},
                 **{f'ce.{k}': v.detach().numpy() for k, v in ce_h[1].state_dict().items()},
                 **{f'ml.{k}': v.detach().numpy() for k, v in ml_h[1].state_dict().items()}}
        train = [v for v, g in seen['ce'] if g], [v for v, g in seen['ml'] if g]
        val = [v for v, g in seen['ce'] if not g], [v for v, g in seen['ml'] if not g]
        return {**flat(f't{t}/fe_before', before), **flat(f't{t}/fe_grad', seen['fe_grad']), **flat(f't{t}/fe_after', after),
                f't{t}/fe_loss': [train[0][0], train[1][0]], f't{t}/fe_val': [val[0][0], val[1][0]]}

    for t, y in ((0, b['y0']), (1, y1)):
        dl = big(b['x'], y)
        torch.manual_seed(2 + t)
        net.modify_head(K0 if t == 0 else K0 + 2)
        appr.pre_train_process(t, dl, dl)
        if t == 1: out['t1/decision'] = list(appr._decide_if_new_fe_is_trained(dl))  # Horde_m: train, into slot 0
        seen.clear()
        hm.Linear, hm.Adam, torch.nn.functional.cross_entropy, appr.contrastive_loss = linear, Adam, ce, cl
        stats0 = appr._calculate_embedding_statistics
        def stats(loader):  # the FE's part ends here: record it, then the head's part begins
            out.update(fe_part(t))
            hm.Linear, hm.Adam, torch.nn.functional.cross_entropy = nn.Linear, torch.optim.Adam, ce0
            stats0(loader)
            out.update(flat(f't{t}/head_before', {f'head.{k}': v.detach().clone().numpy() for k, v in net.linear.state_dict().items()}))
            seen.clear()
            hm.shuffle, torch.randn = shuffle, randn
        appr._calculate_embedding_statistics = stats
        hook = net.linear.register_forward_pre_hook(head_input)
        try: appr.train_loop(t, dl, dl)
        finally:
            hm.Linear, hm.Adam, torch.nn.functional.cross_entropy, appr.contrastive_loss = nn.Linear, torch.optim.Adam, ce0, cl0
            hm.shuffle, torch.randn = shuffle0, randn0
            del appr._calculate_embedding_statistics
            hook.remove()
        n = len(y)
        out.update({f't{t}/initial_mean': appr.initial_mean_embedding.numpy().copy(), f't{t}/initial_std': appr.initial_std_embedding.numpy().copy(),
                    f't{t}/initial_count': appr.initial_max_samples_seen.numpy().copy(),
                    f't{t}/slot_mean': appr.mean_embedding.numpy().copy(), f't{t}/slot_std': appr.std_embedding.numpy().copy(),
                    f't{t}/slot_count': appr.max_samples_seen.numpy().copy(),
                    f't{t}/features': seen['features'][0], f't{t}/val_features': seen['features'][1],
                    f't{t}/head_ce': seen['head_ce'][:1], f't{t}/head_val': appr.logger.values('loss')[-1:],
                    **flat(f't{t}/head_grad', seen['head_grad']),
                    **flat(f't{t}/head_after', {f'head.{k}': v.detach().numpy().copy() for k, v in net.linear.state_dict().items()})})
        if seen.get('targets'):  # per sample: its target class, then the noise of its own and its target's mean (train, val)
            tg, nz = np.array(seen['targets']), np.stack(seen['noise']).reshape(-1, 2, (N_FE - 1) * 8 * NF)
            pf = np.stack(seen['pseudo'])
            out.update({f't{t}/targets': tg[:n], f't{t}/noise': nz[:n], f't{t}/val_targets': tg[n:], f't{t}/val_noise': nz[n:],
                        f't{t}/pseudo': pf[:n], f't{t}/val_pseudo': pf[n:]})
        appr.post_train_process(t, dl, dl)
    net.eval(); seen.clear()
    with torch.no_grad(): out['t1/logits'] = net(torch.as_tensor(b['x'])).numpy()
    out['t1/eval_features'] = seen['features'][0]
    out.update(growth_rules(appr, hm))
    return out


def growth_rules(appr, hm) -> dict:
    """Their `_decide_if_new_fe_is_trained` on hand-made states: Horde_c (`confusion_matrix`) from a given confusion
    matrix, with room and full, scores above and below; its post-training score; Horde_m (`max_classes`) with a tie."""
    out, saved = {}, (appr.fe_selection, appr._cur_val_to_idx_dict, appr._fe_selection_score, appr.cls_trn_in_fe,
                      appr.cls_initial_trained, appr.model.feature_extractors)
    cm_of = {}
    get_cm0 = hm.get_confusion_matrix
    hm.get_confusion_matrix = lambda model, loader, n, device: cm_of['cm'].clone()
    try:
        K = 8
        rng = np.random.RandomState(5)
        cases = []
        for room in (True, False):
            for scale in (0.2, 3.0):  # a nearly diagonal matrix (no FE) and a confused one
                cm = torch.as_tensor(np.diag(rng.randint(20, 40, K)) + (rng.rand(K, K) * scale * 8).astype(int) * (1 - np.eye(K, dtype=int)))
                cm_of['cm'] = cm
                appr.fe_selection = 'confusion_matrix'
                appr._cur_val_to_idx_dict = {0: [0], 6: [1], 7: [2]}
                appr._fe_selection_score = torch.tensor([0.9, 0.4])
                appr.model.feature_extractors = nn.ModuleList([nn.Identity()] * (1 if room else 2))
                dec = appr._decide_if_new_fe_is_trained(None)
                cases.append([float(room), scale, float(appr._fe_possible_max_score), float(dec[0]), float(dec[1])])
                out[f'hc/cm{len(cases) - 1}'] = cm.numpy()
        out['hc/cases'] = np.array(cases)  # room, scale, E, train, slot
        # the score stored after training a slot: E before minus E after (the after-matrix: the first one)
        cm_of['cm'] = torch.as_tensor(out['hc/cm0'])
        appr._fe_possible_max_score = torch.tensor(float(cases[1][2]))
        appr._initial_training_done = True
        appr._update_fe_selection_metrics_post_training(None, True, 1)
        out['hc/score_after'] = float(appr._fe_selection_score[1])
        # Horde_m: initial classes {0..5}; slot 0 trained on {6, 7}, slot 1 empty; current {6, 7, 8} ties slots 0 and 1
        appr.fe_selection = 'max_classes'
        appr.cls_initial_trained = torch.tensor([1.] * 6 + [0.] * 4)
        appr.cls_trn_in_fe = torch.zeros(10, 2); appr.cls_trn_in_fe[[6, 7], 0] = 1
        rows = []
        for cur in ({6, 7, 8}, {6, 8}, {8, 9}, {6, 7}, {0, 1}):
            appr._cur_val_to_idx_dict = {c: [0] for c in sorted(cur)}
            rows.append(list(appr._decide_if_new_fe_is_trained(None)))
        out['hm/cases'] = np.array([[float(a), float(b_)] for a, b_ in rows])
    finally:
        hm.get_confusion_matrix = get_cm0
        (appr.fe_selection, appr._cur_val_to_idx_dict, appr._fe_selection_score, appr.cls_trn_in_fe,
         appr.cls_initial_trained, appr.model.feature_extractors) = saved
    return out


def wa_align(appr):
    "WA's weight aligning after task 1's training, as their train_loop calls it: the head afterwards."
    appr.model.weight_align(sorted(appr.known_classes.difference(set(appr.classes_this_exp))), appr.classes_this_exp)
    return flat('t1/aligned', {'fc.weight': appr.model.head.weight.detach().numpy(), 'fc.bias': appr.model.head.bias.detach().numpy()})


# Whole tasks: their `train` (pre-train pass, epochs with early stopping and lr decay, post-train pass) on fixed data
E2E_TRAIN, E2E_VAL, E2E_EPOCHS, E2E_LR, E2E_PATIENCE = 30, 12, 4, 1e-2, 1  # images per task (30: a last batch of 6), epochs, lr, patience

def e2e_data(t:int, classes:list=None) -> dict:
    """Task t's fixed training and validation images (uint8, NHWC, from one seeded numpy stream) and labels: the task's
    `classes` (ascending, so that first appearance and sorted order agree), by default 0..K0-1 then K0..K1-1."""
    rng = np.random.RandomState(100 + t)
    cls = np.asarray(classes) if classes is not None else np.arange(K0) if t == 0 else np.arange(K0, K1)
    return dict(x_tr=rng.randint(0, 256, size=(E2E_TRAIN, 32, 32, 3)).astype(np.uint8), y_tr=cls[np.arange(E2E_TRAIN) % len(cls)],
                x_va=rng.randint(0, 256, size=(E2E_VAL, 32, 32, 3)).astype(np.uint8), y_va=cls[np.arange(E2E_VAL) % len(cls)])

def normalised(u8) -> np.ndarray:
    return np.ascontiguousarray(((u8.astype(np.float32) / 255 - np.array(MEAN, np.float32)) / np.array(STD, np.float32)).transpose(0, 3, 1, 2))

def normalising():
    "Their transform pipeline reduced to the normalisation (`ToTensor`, then `Normalize` with the il2a constants)."
    import torchvision.transforms as T
    return T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])

class Raw(torch.utils.data.Dataset):
    "uint8 images read through a transform, as their memory datasets read theirs (WA stores exemplars that way)."
    def __init__(self, u8, y, transform): self.images, self.labels, self.transform = u8, torch.as_tensor(y).long(), transform
    def __len__(self): return len(self.labels)
    def __getitem__(self, i):
        from PIL import Image
        return self.transform(Image.fromarray(self.images[i])), self.labels[i]

@contextlib.contextmanager
def recorded_samples(into:list):
    "Their Python `random.sample` draws (random exemplar selection), with the numpy draws of `recorded_draws`."
    sample0 = random.sample
    def sample(population, k, **kw): v = sample0(population, k, **kw); into.append(('sample', np.array(v))); return v
    random.sample = sample
    try:
        with recorded_draws(into): yield into
    finally: random.sample = sample0

def whole_tasks(module:str, keep=None, net_kw={}, lr:float=E2E_LR, record=recorded_draws, raw:bool=False,
                net=None, task_classes:list=None, accumulated_val:bool=False, **kw) -> dict:
    """Two whole tasks of their approach: the state each starts and ends with, validation losses, optimiser, their numpy
    draws in order, and what `keep` reads. `accumulated_val`: task t validates on the validation images of every task up
    to t, class by class (their `get_accumulated_val_loader`, which their main hands Joint)."""
    net = net if net is not None else their_net(K0, seed=1, **net_kw)
    out = {'_tasks': dict(lr=lr, **({} if task_classes is None else dict(task_classes=task_classes)))}
    tasks = task_classes or [list(range(K0)), list(range(K0, K1))]
    appr = make_appr(module, net, **{**dict(nepochs=[E2E_EPOCHS], lr=[lr], lr_patience=E2E_PATIENCE), **kw})
    for t, classes in enumerate(tasks):
        d = e2e_data(t, classes)
        if t:  # their loop grows the head before `train`; these rows start the task
            torch.manual_seed(1 + t); net.modify_head(1 + max(max(c) for c in tasks[:t + 1]))
        pre0 = appr.pre_train_process
        def pre(*a, t=t, **k): pre0(*a, **k); out.update(flat(f't{t}/start', state(net)))  # after heads their pre-train pass grows
        appr.pre_train_process = pre
        losses, eval0 = [], appr.eval_early_stopping
        def watched(*a, **k): r = eval0(*a, **k); losses.append(r[0]); return r
        appr.eval_early_stopping = watched
        draws = []
        if raw:  # datasets of uint8 images and a normalising transform (the same numbers as `normalised`)
            trn, val = (torch.utils.data.DataLoader(Raw(d[f'x_{s}'], d[f'y_{s}'], normalising()), batch_size=B, shuffle=False) for s in ('tr', 'va'))
        else: trn, val = loader(normalised(d['x_tr']), d['y_tr']), loader(normalised(d['x_va']), d['y_va'])
        if accumulated_val:
            seen = [e2e_data(j, c) for j, c in enumerate(tasks[:t + 1])]
            x_va, y_va = (np.concatenate([e[k] for e in seen]) for k in ('x_va', 'y_va'))
            by_class = np.argsort(y_va, kind='stable')
            val = (torch.utils.data.DataLoader(Raw(x_va[by_class], y_va[by_class], normalising()), batch_size=B, shuffle=False) if raw
                   else loader(normalised(x_va[by_class]), y_va[by_class]))
        try:
            with record(draws): appr.train(t, trn, val)
        finally: del appr.eval_early_stopping, appr.pre_train_process
        for kind in dict.fromkeys(k for k, _ in draws):  # each kind in the order drawn; draws of several sizes flat, with their sizes
            vs = [np.asarray(v) for k, v in draws if k == kind]
            if len({v.shape for v in vs}) == 1: out[f't{t}/draws_{kind}'] = np.stack(vs)
            else: out.update({f't{t}/draws_{kind}': np.concatenate([v.ravel() for v in vs]), f't{t}/draws_{kind}_sizes': np.array([v.size for v in vs])})
        g = appr.optimizer.param_groups[0]
        out.update({**flat(f't{t}/end', state(net)), f't{t}/val_losses': np.array(losses, np.float64),
                    f't{t}/optimizer': np.array([g['lr'], g['weight_decay'], *g['betas'], g['eps']], np.float64)})
        if keep: out.update(keep(appr, t))
    return out

def kept(attr:str):
    "A per-parameter dict the approach keeps between tasks (EWC's Fisher and anchor, MAS's importance), after task t."
    return lambda appr, t: flat(f't{t}/{attr}', {ours_name('model.' + n): v.detach().numpy() for n, v in getattr(appr, attr).items()})

def pass_tasks() -> dict:
    "PASS's two whole tasks; after each, its prototypes in their list order, their labels and the radius."
    NAMES[0] = pass_name
    try:
        keep = lambda a, t: {f't{t}/prototypes': np.asarray(a.prototype, np.float32), f't{t}/proto_labels': np.asarray(a.class_label),
                             f't{t}/radius': np.float64(a.radius)}
        # at the protocol's lr 1e-3: at 1e-2, PASS's temperature 0.1 amplifies float rounding a hundredfold per epoch
        return whole_tasks('pass', keep, net_kw=dict(wrapper='networks.pass_network:PASS_Net', orientation_class_head=None,
                                                     _orientation_scale_factor=4), lr=1e-3, protoaug_weight=10., kd_weight=10., temp=0.1)
    finally: NAMES[0] = ours_name

def praka_tasks() -> dict:
    "PRAKA's two whole tasks; after each, its prototypes (by class)."
    NAMES[0] = pass_name
    try:
        keep = lambda a, t: {f't{t}/prototypes': np.stack([a.prototype[c] for c in sorted(a.prototype)]).astype(np.float32)}
        return whole_tasks('praka', keep, net_kw=dict(wrapper='networks.praka_network:PRAKA_Net', orientation_class_head=None,
                                                      _orientation_scale_factor=4), lr=1e-3, protoaug_weight=15., kd_weight=15.,
                           temp=0.1, use_cosine_annealing_scheduler=False, cosine_annealing_rate=32)
    finally: NAMES[0] = ours_name

def il2a_tasks() -> dict:
    "IL2A's two whole tasks (their classAug permutations recorded too); after each, prototypes, labels, covariances and teacher."
    NAMES[0] = pass_name
    try:
        def keep(a, t):
            old = {k[len('backbone.'):]: v for k, v in state(a.old_model).items() if k.startswith('backbone.')}
            return {f't{t}/prototypes': np.asarray(a.prototype, np.float32), f't{t}/proto_labels': np.asarray(a.class_label),
                    f't{t}/covariances': np.asarray(a.cov, np.float32), **flat(f't{t}/teacher', old)}
        return whole_tasks('il2a', keep, net_kw=dict(wrapper='networks.il2a_network:IL2ANet'), lr=1e-3, record=recorded_torch_perms,
                           seman_weight=10., kd_weight=10., temp=0.1, class_aug_alpha=20., class_aug_num_mixups=4, seman_aug_ratio=2.5)
    finally: NAMES[0] = ours_name

@contextlib.contextmanager
def unshuffled(module:str):
    """A module's `DataLoader` (their approach's, or torch's own where their code calls it by its full name) without its
    shuffle (a draw of torch's global stream): batches in the dataset's order."""
    m = importlib.import_module(module)
    shuffled = m.DataLoader
    m.DataLoader = lambda ds, batch_size, shuffle, **k: shuffled(ds, batch_size=batch_size, shuffle=False, **k)
    try: yield
    finally: m.DataLoader = shuffled

def ssre_tasks() -> dict:
    """SSRE's two whole tasks; after each, prototypes in their list order and the teacher. Their first task reshuffles its
    loader with torch's global stream (`train_epoch`); here it keeps the loader's order, the order our test hands ours."""
    NAMES[0] = ssre_name
    try:
        keep = lambda a, t: {f't{t}/prototypes': np.asarray(a.prototype, np.float32), **flat(f't{t}/teacher', state(a.old_model))}
        with unshuffled('approach.ssre'):
            return whole_tasks('ssre', keep, net_kw=dict(wrapper='networks.ssre_network:SSRE_Net', backbone=ssre_backbone,
                                                         pretrained=False, remove_existing_head=True),
                               lr=1e-3, initial_batch_size=B, protoaug_weight=10., kd_weight=1., temp=0.1)
    finally: NAMES[0] = ours_name

def wa_tasks() -> dict:
    """WA's two whole tasks with 12 random exemplars (their `random.sample` picks recorded); after each, the exemplars'
    labels and the teacher. Their task-1 loader shuffles task and exemplars with torch's global stream; here it keeps the
    concatenation's order (task images, then exemplars), the order our test hands ours."""
    from datasets.exemplars_dataset import ExemplarsDataset
    keep = lambda a, t: {f't{t}/exemplar_labels': a.exemplars_dataset.labels.numpy(), **flat(f't{t}/teacher', state(a.model_old))}
    with unshuffled('approach.wa'):
        return whole_tasks('wa', keep, net_kw=dict(wrapper='networks.wa_network:WeightAlignNet', apply_to_bias=False), raw=True,
                           record=recorded_samples, exemplars_dataset=ExemplarsDataset(normalising(), None, num_exemplars=12),
                           initial_nepochs=[E2E_EPOCHS], initial_lr=[E2E_LR], initial_wd=WD, clip_head_weights=False, T=2)

def joint_tasks() -> dict:
    """Joint's two whole tasks: their `train` on the task's images and every earlier one (their `JointTrainingDataset`
    keeps them all), validated on every seen class (`accumulated_val`). Their task-1 loader shuffles the union with
    torch's global stream (their `joint.py` builds it with `torch.utils.data.DataLoader`); here it keeps the
    concatenation's order (the task's images, then the earlier ones class by class), the order our test hands ours.
    After each task: the labels of the images kept. At lr 1e-3: at 1e-2 task 1 turns rounding into differences past
    the comparison's bar (nbs/05_methods/01_baselines shows it)."""
    from datasets.exemplars_dataset import JointTrainingDataset
    keep = lambda a, t: {f't{t}/kept_labels': a.exemplars_dataset.labels.numpy()}
    with unshuffled('torch.utils.data'):
        return whole_tasks('joint', keep, raw=True, accumulated_val=True, lr=1e-3, exemplars_dataset=JointTrainingDataset(normalising(), None))

def horde_name(k:str) -> str:
    "Their `InitHordeModel` name -> our `HordeEnsemble`'s: `initial.`, `slots.<i>.` (each a bare backbone) and `head.`."
    if k.startswith('linear.'): return 'head.' + k[len('linear.'):]
    if k.startswith('initial_feature_extractor.'): return 'initial.' + fe_name(k[len('initial_feature_extractor.'):])
    i, rest = k[len('feature_extractors.'):].split('.', 1)
    return f'slots.{i}.' + fe_name(rest)

@contextlib.contextmanager
def recorded_horde(into:list):
    """Their Horde's draws that reach the numbers: the noise of every ensemble forward pass (a full-width
    `torch.randn`, its empty slots kept) and each pseudo-feature's target class (the first class after their `shuffle`)."""
    hm = importlib.import_module('approach.initial_horde')
    randn0, shuffle0 = torch.randn, hm.shuffle
    def randn(*a, **k):
        v, caller = randn0(*a, **k), sys._getframe(1)
        if caller.f_code.co_name == 'forward':  # `InitHordeModel.forward`: the columns its FEs do not overwrite
            net = caller.f_locals['self']
            filled = net.init_out_size + len(net.feature_extractors) * net.out_size
            if v.shape[1] > filled: into.append(('noise', v[:, filled:].numpy().copy()))
        return v
    def shuffle(xs): shuffle0(xs); into.append(('targets', np.array([xs[0]])))
    torch.randn, hm.shuffle = randn, shuffle
    try: yield into
    finally: torch.randn, hm.shuffle = randn0, shuffle0

def horde_tasks(selection:str) -> dict:
    """Horde's whole tasks (`train_loop`: the growth decision, the FE's training with its own early stopping, the
    statistics, the unified head's epochs, Horde_c's score) with the initial FE and one slot: task 0 trains the initial
    FE (the slot empty), task 1 (class 0 again and four new ones) the slot, task 2 (task 1's new classes again and two
    more) replaces it (a copy of the slot's FE, its CE head warmed up first). After each task: the FE's start and end
    (with its two training heads) and its optimiser, the statistics, the class bookkeeping, the decision and Horde_c's
    scores."""
    hm = importlib.import_module('approach.initial_horde')
    NAMES[0], made, fresh = horde_name, [], []
    fe_state = lambda fe: {fe_name(k): v.clone().numpy() for k, v in fe.state_dict().items()}
    def new_fe(): fe = fresh_fe(); fresh.append(fe_state(fe)); return fe
    def linear(*a, **k):
        lin = nn.Linear(*a, **k); made.append(('head', lin, {k_: v.clone().numpy() for k_, v in lin.state_dict().items()})); return lin
    class Adam(torch.optim.Adam):  # the FE's optimiser
        def __init__(self, *a, **k): super().__init__(*a, **k); made.append(('opt', self, None))
    train_fe0 = hm.Appr._train_feature_extractor
    def train_fe(self, t, fe_idx, trn, val):  # the FE it starts from: a fresh one, or a copy of the slot it replaces
        replacing = self._initial_training_done and not (self.model.has_room_to_grow() or fe_idx == -1)
        start = fe_state(self.model.feature_extractors[fe_idx]) if replacing else None
        seen, ce0, cl0 = [], torch.nn.functional.cross_entropy, self.contrastive_loss
        def watched(kind, f):  # the validation terms (their validation runs in inference mode), with the rotated batch size
            def term(out, target, *a, **k):
                v = f(out, target, *a, **k)
                if torch.is_inference_mode_enabled(): seen.append((kind, float(v), len(target)))
                return v
            return term
        torch.nn.functional.cross_entropy, self.contrastive_loss = watched('ce', ce0), watched('ml', cl0)
        try: fe = train_fe0(self, t, fe_idx, trn, val)
        finally: torch.nn.functional.cross_entropy = ce0; del self.contrastive_loss
        # each epoch's early-stopping loss as their loop sums it: terms weighted by the unrotated batch, over the rotated count
        per, n_rot = len(val), len(val.dataset) * 4  # not by iterating `val`: each iteration draws a seed from torch's global stream
        ce, ml = ([v * n / 4 for k, v, n in seen if k == kind] for kind in ('ce', 'ml'))
        val_losses = [sum((1 - self.alpha) * c + self.alpha * m for c, m in zip(ce[e:e + per], ml[e:e + per])) / n_rot
                      for e in range(0, len(ce), per)]
        made.append(('fe', fe, start if replacing else fresh.pop(), replacing, val_losses))
        return fe
    net = horde_net(n_fe=2)
    net.get_initial_model = net.get_fe_model = new_fe
    torch.manual_seed(1); net.modify_head(K0)
    decisions = []
    def keep(a, t):
        (_, fe, fe0, replaced, fe_val), = [m for m in made if m[0] == 'fe']
        ce, ml = [m for m in made if m[0] == 'head']
        g = [m[1] for m in made if m[0] == 'opt'][-1].param_groups[0]
        d = {**flat(f't{t}/fe_start', fe0), **flat(f't{t}/fe_end', fe_state(fe)), f't{t}/fe_replaced': np.array(replaced), f't{t}/fe_val_losses': np.array(fe_val, np.float64),
             **flat(f't{t}/ce_start', ce[2]), **flat(f't{t}/ce_end', ce[1].state_dict()),
             **flat(f't{t}/ml_start', ml[2]), **flat(f't{t}/ml_end', ml[1].state_dict()),
             f't{t}/fe_optimizer': np.array([g['lr'], g['weight_decay'], *g['betas'], g['eps']], np.float64),
             f't{t}/initial_mean': a.initial_mean_embedding.numpy().copy(), f't{t}/initial_std': a.initial_std_embedding.numpy().copy(),
             f't{t}/initial_count': a.initial_max_samples_seen.numpy().copy(), f't{t}/slot_mean': a.mean_embedding.numpy().copy(),
             f't{t}/slot_std': a.std_embedding.numpy().copy(), f't{t}/slot_count': a.max_samples_seen.numpy().copy(),
             f't{t}/cls_initial': a.cls_initial_trained.numpy().copy(), f't{t}/cls_slots': a.cls_trn_in_fe.numpy().copy(),
             f't{t}/scores': a._fe_selection_score.numpy().copy(), f't{t}/decision': np.array(decisions[-1], np.float64)}
        made.clear()
        return d
    decide0 = hm.Appr._decide_if_new_fe_is_trained
    def decide(self, loader):  # their decision, and Horde_c's error E where it measures one
        train, at = decide0(self, loader)
        decisions.append([float(train), float(at), float(self._fe_possible_max_score or 0.)])
        return train, at
    hm.Linear, hm.Adam, hm.Appr._decide_if_new_fe_is_trained, hm.Appr._train_feature_extractor = linear, Adam, decide, train_fe
    try:
        tasks = [list(range(K0)), [0, *range(K0, K1)], [*range(K0, K1), K1, K1 + 1]]
        return whole_tasks('initial_horde', keep, net=net, task_classes=tasks, record=recorded_horde, lr=LR,
                           **HORDE_KW, fe_lr=[LR], fe_epochs=[E2E_EPOCHS], fe_selection=selection, logger=Scalars())
    finally:
        hm.Linear, hm.Adam, hm.Appr._decide_if_new_fe_is_trained, hm.Appr._train_feature_extractor = nn.Linear, torch.optim.Adam, decide0, train_fe0
        NAMES[0] = ours_name

def teacher(appr, t):
    "LwF's distillation teacher after task t: their frozen copy of the network."
    return flat(f't{t}/teacher', state(appr.model_old)) if appr.model_old is not None else {}


GENERATORS = dict(
    ft=lambda: two_tasks('finetuning', task_ce_only=True),
    fz=lambda: two_tasks('freezing', task_ce_only=True),
    joint=lambda: two_tasks('joint'),
    ewc=lambda: two_tasks('ewc', importance_of('fisher'), lamb=40000., alpha=0.1, task_ce_only=True),
    mas=lambda: two_tasks('mas', importance_of('importance'), lamb=10., alpha=0.1, task_ce_only=True),
    lwf=lambda: two_tasks('lwf', lwf_targets, lamb=30., T=2),
    **{'pass': pass_golden},
    il2a=il2a_golden,
    praka=praka_golden,
    ssre=ssre_golden,
    fetril=fetril_golden,
    horde=horde_golden,
    wa=lambda: two_tasks('wa', after=wa_align, net_kw=dict(wrapper='networks.wa_network:WeightAlignNet', apply_to_bias=False),
                         loss_fn='_compute_loss', initial_nepochs=[1], initial_lr=[LR], initial_wd=WD, clip_head_weights=False, T=2),
    ft_tasks=lambda: whole_tasks('finetuning', task_ce_only=True),
    fz_tasks=lambda: whole_tasks('freezing', task_ce_only=True),
    ewc_tasks=lambda: whole_tasks('ewc', lambda a, t: {**kept('fisher')(a, t), **kept('older_params')(a, t)}, lamb=40000., alpha=0.1, task_ce_only=True),
    mas_tasks=lambda: whole_tasks('mas', lambda a, t: {**kept('importance')(a, t), **kept('older_params')(a, t)}, lamb=10., alpha=0.1, task_ce_only=True),
    lwf_tasks=lambda: whole_tasks('lwf', teacher, lamb=30., T=2),
    pass_tasks=pass_tasks,
    praka_tasks=praka_tasks,
    il2a_tasks=il2a_tasks,
    ssre_tasks=ssre_tasks,
    wa_tasks=wa_tasks,
    joint_tasks=joint_tasks,
    horde_m_tasks=lambda: horde_tasks('max_classes'),
    horde_c_tasks=lambda: horde_tasks('confusion_matrix'),
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
            np.random.seed(0); random.seed(0)  # their numpy and Python draws: the same fixture on every generation
            vals = GENERATORS[m]()
            protocol = vals.pop('_tasks', None)  # a whole-task fixture's own protocol values (its learning rate)
            np.savez_compressed(out / f'{m}.npz', **{k: np.asarray(v) for k, v in vals.items()})
            meta[m] = dict(their_commit=their_commit(code), our_commit=ours, torch=torch.__version__, width=NF, batch=B,
                           classes=[K0, K1], lr=LR, weight_decay=WD, layouts=dict(LAYOUTS),
                           generated=datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
                           command=portable_text(' '.join(['golden.py'] + (argv if argv is not None else sys.argv[1:]))))
            if m.endswith('_tasks'):  # the whole-task protocol, and a digest of the data (which the tests regenerate)
                h = hashlib.sha1()
                for t, c in enumerate(protocol.get('task_classes') or [None, None]):
                    h.update(b''.join(np.ascontiguousarray(v).tobytes() for v in e2e_data(t, c).values()))
                meta[m]['tasks'] = dict(train=E2E_TRAIN, val=E2E_VAL, epochs=E2E_EPOCHS, patience=E2E_PATIENCE,
                                        data_seeds=[100 + t for t in range(len(protocol.get('task_classes') or [0, 1]))], data_sha1=h.hexdigest(), **protocol)
            print(f"{m}: {len(vals)} arrays, {(out / f'{m}.npz').stat().st_size / 1024:.0f} KiB")
    known = {v: json.loads(k) for k, v in SHAPES.items()}
    meta['layouts'] = {**{k: v for k, v in meta.get('layouts', {}).items()}, **known}
    b = batch()
    np.savez_compressed(out / 'batch.npz', x=b['x'], y0=b['y0'], y1=b['y1'])  # the one batch every fixture was computed on
    meta_p.write_text(json.dumps(meta, sort_keys=True, separators=(',', ':')) + '\n')


if __name__ == '__main__':
    main()
