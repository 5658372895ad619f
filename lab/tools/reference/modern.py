#!/usr/bin/env python
"""Golden values of the exemplar-free methods that came after the paper, from their authors' unmodified code.

    python lab/tools/reference/modern.py [--fecam PATH/FeCAM] [--seed-code PATH/SEED] [--adagauss PATH/AdaGauss] [--ldc PATH/ldc] [--efc PATH/elastic_feature_consolidation] [--adc PATH/ADC] [--out nbs/golden]

FeCAM (`dipamgoswami/FeCAM`, PyCIL-based): its class statistics and its Mahalanobis classifier, from fixed features.
Their learner is built without its constructor (`FeCAM.__new__`) and given the attributes the functions below read;
the data manager and `_extract_vectors` are stand-ins (and `timm`, which their network module imports for ViTs, an
empty module where it is not installed) that hand their functions our fixed features, class by class,
so no network, data loader or GPU is involved. Called, unmodified: `utils/maha_utils.py: compute_new_cov`,
`models/base.py: BaseLearner.shrink_cov, normalize_cov, _tukeys_transform, _maha_dist, _mahalanobis` in the order
`models/fecam.py: FeCAM._train` calls them after a task, and `_eval_maha`'s normalisation of the test vectors.

SEED (`grypesc/SEED`, FACIL-based): its Gaussians, its expert choice, its ensemble's prediction and its fine-tuning
loss, on a three-task stream of 8×8 images seen by two stand-in experts (fixed linear maps, stored here so that ours
computes the same features). Their approach is built without its constructor (`Appr.__new__`) and given the attributes
its methods read; the loaders are stand-ins holding the images and their test-time transform. Called, unmodified:
`src/approach/seed.py: Appr.create_distributions` (features of each image and of its mirror image, one
`GaussianMixture` per class and expert, its covariance regularisation raised tenfold until it fits), `_choose_backbone_to_finetune`
(its overlap per expert is read from the `torch.argmax` it calls), `predict_class_bayes`, `criterion`, and
`src/approach/gmm.py: GaussianMixture.score_samples`. Their training loops (SGD, fixed epochs) are not run: ours trains
under the paper's protocol instead.

AdaGauss (`grypesc/AdaGauss`, FACIL-based): its anti-collapse loss and projected distillation with their gradients,
its class Gaussians after two tasks of 8×8 images seen by stand-in linear networks (the network before and after the
second task), the adaptation of the first task's Gaussians through an adapter network (its weights and the random
state after building it are stored, so ours samples the same points), and its Bayes classifier. Called, unmodified:
`src/approach/ada_gauss.py: loss_ac, Appr.distill_projected, create_distributions, adapt_distributions` (with no
adapter epochs: the adapter stays as built, the step after training is what is compared), `shrink_cov`, `norm_cov`
and `eval` (one test image at a time, each class as its target, to read the class it predicts). Then
`adapt_distributions` once more for one epoch, stopped after its first batch's backward pass: the batch, the adapter
before its step, the anti-collapse term and the adapter's gradients (`adagauss_adapter_step`).

LDC (`alviur/ldc`, PyCIL-based, `LDC_supervised/models/lwf.py`): the second task's end of `LwF._train` with LDC on —
`_build_protos` for the new classes, the projector (`nn.Linear(512, 512)`, Adam, 20 epochs of MSE from the old
network's features to the new one's over the task's loader), the old prototypes mapped through it — and `_eval_ncm`.
The networks are stand-ins (fixed linear maps to 512 features, stored), and so is the LwF training before it
(`_update_representation`, a method that trains nothing here: ours is the paper's LwF); the loaders hold fixed batches.

EFC++ (`simomagi/elastic_feature_consolidation`, `continual_learning/ElasticFeatPlusPlus.py`; needs `einops`): the
empirical feature matrix (`utils/empirical_feature_matrix.py: EmpiricalFeatureMatrix.compute`), the elastic loss with
its gradient (`efm_loss`), the class prototypes and covariances (`utils/proto.py: ProtoGenerator.compute`) and the
prototype drift (`compute_drift`), on two tasks of 4×4 images seen by stand-in networks (linear maps, stored) with
bias-free heads as theirs. The head re-balancing draws from the global random state at every step and is not compared.

ADC (`dipamgoswami/ADC`, PyCIL-based, `models/lwf.py`): the second task's end of `LwF._train` with ADC on — for each old
class the task's images closest to its prototype in the old network's space, pushed towards it by `utils/attack.py:
Attack.run` (normalised-gradient steps on the old network, clamped to the pixel range the task's loader shows; the
ones the old prototypes then classify as the class kept), and the prototype moved by their mean feature change —
with stand-in linear networks (stored) and the LwF training before it a method that trains nothing, as for LDC.
"""
from __future__ import annotations
import argparse, contextlib, io, re, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))
from lab.tools.reference.run_reference import their_commit, stub_absent  # noqa: E402


def fecam_inputs(seed:int=0, n_classes:int=5, per_class:int=40, dim:int=12, n_test:int=60):
    "Non-negative features (as after a ReLU) of a few classes with their own scales and correlations, and test features."
    rng = np.random.RandomState(seed)
    mix = [rng.randn(dim, dim) * 0.3 + np.eye(dim) for _ in range(n_classes)]
    feats = np.stack([np.abs(rng.randn(per_class, dim) @ mix[c] + c * 0.5).astype(np.float32) for c in range(n_classes)])
    test = np.abs(rng.randn(n_test, dim) @ mix[0] + rng.randint(0, n_classes, n_test)[:, None] * 0.5).astype(np.float32)
    return feats, test


def fecam_golden(repo:Path, feats, test, beta=0.5, alpha1=1., alpha2=1.) -> dict:
    import torch
    stub_absent('timm')  # imported at the top of utils/inc_net.py for its ViT networks, which FeCAM's CNN path never builds
    sys.path.insert(0, str(repo))
    try:
        from models.fecam import FeCAM
        from utils.maha_utils import compute_new_cov
        from models.base import EPSILON
    finally: sys.path.remove(str(repo))
    n_classes = len(feats)
    m = FeCAM.__new__(FeCAM)
    m.args = dict(tukey=True, beta=beta, alpha1=alpha1, alpha2=alpha2, shrink=True, norm_cov=True, full_cov=True,
                  per_class=True, ncm=False, diagonal=False, batch_size=8)
    m._device, m._cur_task, m._known_classes, m._total_classes = 'cpu', 1, 0, n_classes
    m._cov_mat, m._cov_mat_shrink, m._norm_cov_mat = [], [], []
    m._protos = [torch.tensor(np.mean(f, axis=0)) for f in feats]  # _build_protos: the mean of the raw vectors
    asked = []
    class Data:  # the data manager: remembers which class was asked for
        def get_dataset(self, classes, **kw): asked.append(int(classes[0])); return None, None, list(range(feats.shape[1]))
    m.data_manager = Data()
    m._extract_vectors = lambda loader: (feats[asked[-1]], None)
    compute_new_cov(m)                                          # per class: Tukey, np.cov, one shrinkage
    for cov in m._cov_mat: m._cov_mat_shrink.append(m.shrink_cov(cov))  # FeCAM._train: the second shrinkage
    with contextlib.redirect_stdout(io.StringIO()): m._norm_cov_mat = m.normalize_cov()
    vectors = (test.T / (np.linalg.norm(test.T, axis=0) + EPSILON)).T  # _eval_maha
    dists = m._maha_dist(vectors, None, m._protos)              # [C, N]
    return dict(cov=np.stack([c.numpy() for c in m._cov_mat]), cov_shrink=np.stack([c.numpy() for c in m._cov_mat_shrink]),
                norm_cov=np.stack([c.numpy() for c in m._norm_cov_mat]), dists=dists, pred=np.argmin(dists, 0))


def seed_inputs(seed:int=0, dim:int=6, side:int=8, per_class=(12, 12, 12, 10, 2, 12, 9), tasks=((0, 1, 2), (3, 4), (5, 6)), n_test:int=40):
    "Images of seven classes in three tasks (class 4 has too few for a regular covariance), two linear experts, a third one for the fine-tuned expert."
    rng = np.random.RandomState(seed)
    base = rng.randint(0, 256, (len(per_class), side, side, 3))
    img = lambda c, n: np.clip(base[c] + rng.randint(-60, 61, (n, side, side, 3)), 0, 255).astype(np.uint8)
    images = [img(c, n) for c, n in enumerate(per_class)]
    test_y = rng.randint(0, len(per_class), n_test)
    test = np.stack([img(c, 1)[0] for c in test_y])
    w = rng.randn(3, dim, 3 * side * side).astype(np.float32) * 0.05   # experts 0, 1 and expert 0 or 1 after fine-tuning
    b = rng.randn(3, dim).astype(np.float32) * 0.1
    return dict(images=images, tasks=tasks, test=test, test_y=test_y, w=w, b=b)


def seed_golden(repo:Path, inp:dict, n_experts:int=2, tau:float=3., alpha:float=0.99) -> dict:
    import torch, types
    from torch import nn
    from torchvision import transforms
    sys.path.insert(0, str(repo / 'src'))
    try: from approach.seed import Appr
    finally: sys.path.remove(str(repo / 'src'))
    linear = lambda k: nn.Sequential(nn.Flatten(), nn.Linear(inp['w'].shape[2], inp['w'].shape[1]))
    nets = []
    for k in range(3):
        net = linear(k)
        with torch.no_grad(): net[1].weight.copy_(torch.from_numpy(inp['w'][k])); net[1].bias.copy_(torch.from_numpy(inp['b'][k]))
        nets.append(net.eval())
    tasks = inp['tasks']
    model = types.SimpleNamespace(bbs=nets[:n_experts], taskcla=[(t, len(c)) for t, c in enumerate(tasks)], task_offset=[0],
                                  num_features=inp['w'].shape[1], device='cpu', eval=lambda: None)
    a = Appr.__new__(Appr)
    a.model, a.device, a.max_experts, a.gmms, a.use_multivariate, a.tau, a.alpha = model, 'cpu', n_experts, 1, True, tau, alpha
    a.experts_distributions = []
    norm = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5071, 0.4866, 0.4409), (0.2673, 0.2564, 0.2762))])
    def loaders(t):
        imgs = np.concatenate([inp['images'][c] for c in tasks[t]])
        labels = [c for c in tasks[t] for _ in range(len(inp['images'][c]))]
        trn = types.SimpleNamespace(dataset=types.SimpleNamespace(images=imgs, labels=labels), num_workers=0)
        return trn, types.SimpleNamespace(dataset=types.SimpleNamespace(transform=norm))
    out, overlap = {}, []
    quiet = contextlib.redirect_stdout(io.StringIO())
    with quiet:
        for t in range(len(tasks)):
            trn, val = loaders(t)
            if t < n_experts: a.experts_distributions.append([])
            else:  # the overlap each expert gives the task's classes, as the arg-max it is chosen by sees it
                argmax = torch.argmax
                torch.argmax = lambda x, *r, **k: (overlap.append(x.clone()), argmax(x, *r, **k))[1]
                try: chosen = a._choose_backbone_to_finetune(t, trn, val)
                finally: torch.argmax = argmax
                model.bbs[chosen] = nets[2]  # what fine-tuning made of the chosen expert (a fixed stand-in)
            a.create_distributions(t, trn, val)
    test = torch.stack([norm(transforms.functional.to_pil_image(im)) for im in inp['test']])
    with torch.no_grad(): feats = torch.stack([bb(test) for bb in model.bbs], dim=1)  # their eval: [N, experts, d]
    for b, dists in enumerate(a.experts_distributions):  # expert b holds the classes from task b on
        out[f'mu{b}'] = np.stack([d.mu.data.reshape(-1).numpy() for d in dists])
        out[f'var{b}'] = np.stack([d.var.data[0, 0].numpy() for d in dists])
        out[f'eps{b}'] = np.array([d.eps for d in dists])
        out[f'loglik{b}'] = np.stack([d.score_samples(feats[:, b]).numpy() for d in dists], 1)
    out['pred'] = a.predict_class_bayes(len(tasks) - 1, feats)[1].numpy()
    # the fine-tuning loss: (1 - alpha) CE + alpha MSE to the frozen copy's features, and its gradients
    rng = np.random.RandomState(1)
    logits, f_new, f_old = (torch.tensor(rng.randn(*s).astype(np.float32), requires_grad=True) for s in ((8, 3), (8, 6), (8, 6)))
    y = torch.as_tensor(rng.randint(0, 3, 8))
    loss = a.criterion(2, logits, y, f_new, f_old.detach())
    loss.backward()
    ce = a.criterion(2, logits, y)
    return dict(out, overlap=overlap[0].numpy(), chosen=np.array(chosen), loss_logits=logits.detach().numpy(), loss_y=y.numpy(),
                loss_new=f_new.detach().numpy(), loss_old=f_old.detach().numpy(), loss=np.array(loss.item()), ce=np.array(ce.item()),
                grad_logits=logits.grad.numpy(), grad_new=f_new.grad.numpy())


class _Images:
    "A stand-in FACIL dataset: uint8 images, labels, the test-time transform."
    def __init__(self, images, labels, transform): self.images, self.labels, self.transform = images, labels, transform
    def __len__(self): return len(self.images)
    def __getitem__(self, i): return self.transform(self.images[i]), self.labels[i]  # what a loader over it reads


def adagauss_inputs(seed:int=0, S:int=4, side:int=8, per_class:int=12, tasks=((0, 1, 2), (3, 4)), n_test:int=30):
    "Images of five classes in two tasks; the network before and after the second task (linear maps to S dimensions); test images."
    rng = np.random.RandomState(seed)
    base = rng.randint(0, 256, (5, side, side, 3))
    img = lambda c, n: np.clip(base[c] + rng.randint(-60, 61, (n, side, side, 3)), 0, 255).astype(np.uint8)
    images = [img(c, per_class) for c in range(5)]
    test_y = rng.randint(0, 5, n_test)
    w = rng.randn(2, S, 3 * side * side).astype(np.float32) * 0.05
    return dict(images=images, tasks=tasks, test=np.stack([img(c, 1)[0] for c in test_y]), test_y=test_y, w=w,
                b=rng.randn(2, S).astype(np.float32) * 0.1, feats=rng.randn(16, S).astype(np.float32) * rng.uniform(.2, 2, S).astype(np.float32))


def adagauss_golden(repo:Path, inp:dict, N:int=2000, lamb:float=10., alpha:float=1., beta:float=1., seed:int=7) -> dict:
    import torch, types
    from torch import nn
    from torchvision import transforms
    sys.path.insert(0, str(repo / 'src'))
    try: from approach.ada_gauss import Appr, loss_ac
    finally: sys.path.remove(str(repo / 'src'))
    S = inp['w'].shape[1]
    def net(k):
        m = nn.Sequential(nn.Flatten(), nn.Linear(inp['w'].shape[2], S))
        with torch.no_grad(): m[1].weight.copy_(torch.from_numpy(inp['w'][k])); m[1].bias.copy_(torch.from_numpy(inp['b'][k]))
        return m.eval()
    norm = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5071, 0.4866, 0.4409), (0.2673, 0.2564, 0.2762))])
    out = {}
    f = torch.from_numpy(inp['feats']).requires_grad_()
    ac, _ = loss_ac(f, beta); ac.backward()
    out.update(ac=np.array(ac.item()), grad_ac=f.grad.numpy())
    a = Appr.__new__(Appr)
    a.device, a.S, a.lamb, a.alpha, a.beta, a.N, a.shrink, a.multiplier = 'cpu', S, lamb, alpha, beta, N, 0., 32
    a.adaptation_strategy, a.adapter_type, a.lr_adapter, a.nepochs, a.dump = 'full', 'mlp', 0.01, 0, False
    a.is_normalization, a.classifier, a.task_offset, a.classes_in_tasks = True, 'bayes', [0], []
    a.means, a.covs, a.covs_raw = torch.empty((0, S)), torch.empty((0, S, S)), torch.empty((0, S, S))
    a.train_data_loaders, a.val_data_loaders = [], []
    torch.manual_seed(seed)
    distiller = nn.Sequential(nn.Linear(S, 32 * S), nn.GELU(), nn.Linear(32 * S, S))
    a.old_model = net(0)
    x = torch.stack([norm(transforms.functional.to_pil_image(im)) for im in inp['test'][:8]])
    f = net(1)(x).detach().requires_grad_()
    total, kd = a.distill_projected(1, torch.tensor(0.5), f, distiller, x); total.backward()
    out.update(distiller={k: v.numpy() for k, v in distiller.state_dict().items()}, kd=np.array(kd.item()), total=np.array(total.item()), grad_kd=f.grad.numpy())
    quiet = contextlib.redirect_stdout(io.StringIO())
    for t, classes in enumerate(inp['tasks']):
        imgs = np.concatenate([inp['images'][c] for c in classes])
        labels = [c for c in classes for _ in range(len(inp['images'][c]))]
        trn = types.SimpleNamespace(dataset=_Images(imgs, labels, norm), batch_size=8, num_workers=0)
        val = types.SimpleNamespace(dataset=_Images(imgs, labels, norm), batch_size=8, num_workers=0)
        a.classes_in_tasks.append(len(classes)); a.train_data_loaders.append(trn); a.val_data_loaders.append(val)
        a.task_offset.append(a.task_offset[-1] + len(classes))
        a.model = net(t)
        if t > 0:
            out.update(old_means=a.means.numpy().copy(), old_covs=a.covs.numpy().copy())
            torch.manual_seed(seed)
            with quiet: a.adapt_distributions(t, trn, val)
            out.update(adapted_means=a.means.numpy().copy(), adapted_covs=a.covs.numpy().copy())
        with quiet: a.create_distributions(t, trn, val, len(classes))
    torch.manual_seed(seed)  # what adapt_distributions built, rebuilt in the same order: the linear adapter it discards, then the MLP
    nn.Linear(S, S); adapter = nn.Sequential(nn.Linear(S, 32 * S), nn.GELU(), nn.Linear(32 * S, S))
    out.update(adapter={k: v.numpy() for k, v in adapter.state_dict().items()}, rng_after_adapter=torch.get_rng_state().numpy())
    covs = a.covs.clone()
    for i in range(len(covs)): covs[i] = a.shrink_cov(covs[i], 3)
    a.covs_inverted = torch.inverse(a.norm_cov(covs))
    test = torch.stack([norm(transforms.functional.to_pil_image(im)) for im in inp['test']])
    pred = []
    for i in range(len(test)):  # their eval scores accuracy only: the class whose target scores 1 is the one it predicts
        hits = [a.eval(1, [(test[i:i + 1], torch.tensor([c]))])[2] for c in range(5)]
        pred.append(int(np.argmax(hits)))
    out.update(means=a.means.numpy(), covs=a.covs.numpy(), pred=np.array(pred))
    out.update(adagauss_adapter_step(a, trn, net, seed))
    return {k: v for k, v in out.items() if not isinstance(v, dict)} | {f'{n}.{k}': v for n in ('distiller', 'adapter', 'adapter_step') for k, v in out[n].items()}


class _Caught(Exception): pass


def adagauss_adapter_step(a, trn, net, seed:int) -> dict:
    "Their adapter's first training batch (`adapt_distributions` run for one epoch): its images, the adapter before the step, the anti-collapse term and the gradients."
    import torch
    from torch import nn
    import approach.ada_gauss as ag
    seen = {}
    class Recording(nn.Module):  # the old network, recording the batch it is given
        def __init__(self, inner): super().__init__(); self.inner = inner
        def forward(self, z): seen.setdefault('images', z.clone()); return self.inner(z)
    def caught(params, *args, **kw):  # called after backward, before the step: read the gradients, then stop
        params = list(params)
        seen.update(grads=[p.grad.clone() for p in params], weights=[p.detach().clone() for p in params])
        raise _Caught
    loss_ac, clip = ag.loss_ac, torch.nn.utils.clip_grad_norm_
    def recorded_ac(f, beta):
        ac, det = loss_ac(f, beta); seen.setdefault('ac', ac.item()); return ac, det
    a.old_model, a.model, a.nepochs = Recording(net(0)), net(1), 2
    ag.loss_ac, torch.nn.utils.clip_grad_norm_ = recorded_ac, caught
    torch.manual_seed(seed + 1)
    try:
        with contextlib.redirect_stdout(io.StringIO()): a.adapt_distributions(1, trn, trn)
    except _Caught: pass
    finally: ag.loss_ac, torch.nn.utils.clip_grad_norm_ = loss_ac, clip
    names = [n for n, _ in nn.Sequential(nn.Linear(1, 1), nn.GELU(), nn.Linear(1, 1)).named_parameters()]
    return dict(adapter_images=seen['images'].numpy(), adapter_ac=np.array(seen['ac']),
                adapter_step={**{f'w.{n}': w.numpy() for n, w in zip(names, seen['weights'])},
                              **{f'grad.{n}': g.numpy() for n, g in zip(names, seen['grads'])}})


def ldc_golden(repo:Path, seed:int=0, d:int=512, side:int=4, per_class:int=10, n_test:int=24) -> dict:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    stub_absent('timm')  # imported by utils/inc_net.py for ViTs, which the CNN path never builds
    sys.path.insert(0, str(repo / 'LDC_supervised'))
    try: import models.lwf as lwf
    finally: sys.path.remove(str(repo / 'LDC_supervised'))
    rng = np.random.RandomState(seed)
    x = {c: torch.from_numpy(rng.randn(per_class, 3, side, side).astype(np.float32) + c * 0.3) for c in range(5)}
    test_y = rng.randint(0, 5, n_test)
    test = torch.stack([torch.from_numpy(rng.randn(3, side, side).astype(np.float32)) + c * 0.3 for c in test_y])
    w = rng.randn(2, d, 3 * side * side).astype(np.float32) * 0.05
    class Net(nn.Module):  # the old (k=0) and new (k=1) network: their dict interface
        def __init__(self, k): super().__init__(); self.lin = nn.Linear(3 * side * side, d, bias=False); self.lin.weight.data = torch.from_numpy(w[k])
        def extract_vector(self, z): return self.lin(z.flatten(1))
        def forward(self, z): return dict(features=self.extract_vector(z), logits=None)
    task = torch.cat([x[3], x[4]]); labels = torch.tensor([3] * per_class + [4] * per_class)
    train_loader = DataLoader(TensorDataset(torch.arange(len(task)), task, labels), batch_size=8, shuffle=False)
    class Data:
        def get_dataset(self, classes, source, mode, shot=None, ret_data=False):
            c = int(classes[0]); ds = TensorDataset(torch.arange(per_class), x[c], torch.full((per_class,), c))
            return None, None, ds
    m = lwf.LwF.__new__(lwf.LwF)
    m.args = dict(SDC=False, LDC=True, ADC=False, resume=False, NCM=True)
    m._cur_task, m._known_classes, m._total_classes, m._device, m.shot = 1, 3, 5, 'cpu', None
    m._network, m._old_network, m.data_manager = Net(1), Net(0), Data()
    with torch.no_grad(): m._protos = [Net(0).extract_vector(x[c]).mean(0) for c in range(3)]  # after task 0: the old network's class means
    old_protos = torch.stack(m._protos).numpy().copy()
    m._update_representation = lambda *a: None  # the LwF training before LDC: a stand-in that trains nothing (ours is the paper's LwF)
    states, Linear = [], nn.Linear
    class Recorded(Linear):  # the random state their projector is built from (their loaders draw from it before)
        def __init__(self, *a, **k): states.append(torch.get_rng_state()); super().__init__(*a, **k)
    torch.manual_seed(seed)
    nn.Linear = Recorded
    try:
        with contextlib.redirect_stdout(io.StringIO()): m._train(train_loader, None)
    finally: nn.Linear = Linear
    torch.set_rng_state(states[0]); init = nn.Linear(d, d, bias=False).weight.detach().numpy()  # the projector as built, rebuilt: its first row pins it
    test_loader = DataLoader(TensorDataset(torch.arange(n_test), test, torch.from_numpy(test_y)), batch_size=8)
    pred, _ = m._eval_ncm(test_loader, m._protos)
    return dict(x=np.stack([x[c].numpy() for c in range(5)]), test=test.numpy(), test_y=test_y, w=w, old_protos=old_protos,
                protos=torch.stack(m._protos).detach().numpy(), projector_row0=init[0], pred=pred[:, 0], rng_projector=states[0].numpy())


def adc_golden(repo:Path, seed:int=0, d:int=16, side:int=4, per_class:int=10, sample_limit:int=8, alpha:float=1., steps:int=3, spread:float=2.) -> dict:
    "The end of their second task with ADC on (`models/lwf.py: LwF._train`, `utils/attack.py: Attack`): stand-in linear networks, 3 old classes."
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    stub_absent('timm')  # imported by utils/inc_net.py for ViTs, which the CNN path never builds
    sys.path.insert(0, str(repo))
    try: import models.lwf as lwf
    finally: sys.path.remove(str(repo))
    rng = np.random.RandomState(seed)
    x = {c: torch.from_numpy(rng.randn(per_class, 3, side, side).astype(np.float32) + c * 0.3) for c in range(5)}
    w = rng.randn(2, d, 3 * side * side).astype(np.float32) * 0.2
    class Net(nn.Module):  # the old (k=0) and new (k=1) network: their dict interface
        def __init__(self, k): super().__init__(); self.lin = nn.Linear(3 * side * side, d, bias=False); self.lin.weight.data = torch.from_numpy(w[k])
        def extract_vector(self, z): return self.lin(z.flatten(1))
        def forward(self, z): return dict(features=self.extract_vector(z), logits=None)
    task = torch.cat([x[3], x[4]]); labels = torch.tensor([3] * per_class + [4] * per_class)
    train_loader = DataLoader(TensorDataset(torch.arange(len(task)), task, labels), batch_size=8, shuffle=False)
    class Data:
        def get_dataset(self, classes, source, mode, shot=None, ret_data=False):
            c = int(classes[0]); ds = TensorDataset(torch.arange(per_class), x[c], torch.full((per_class,), c))
            return None, None, ds
    m = lwf.LwF.__new__(lwf.LwF)
    m.args = dict(SDC=False, ADC=True, resume=False, NCM=True, adv_epoch=steps, alpha=alpha, sample_limit=sample_limit)
    m._cur_task, m._known_classes, m._total_classes, m._device, m.shot = 1, 3, 5, 'cpu', None
    m._network, m._old_network, m.data_manager = Net(1), Net(0).requires_grad_(False).eval(), Data()
    with torch.no_grad(): m._protos = [Net(0).extract_vector(x[c]).mean(0) + spread * c for c in range(3)]  # after task 0, moved apart
    old_protos = torch.stack(m._protos).numpy().copy()
    m._update_representation = lambda *a: None  # the LwF training before ADC: a stand-in that trains nothing (ours is the paper's LwF)
    said = io.StringIO()
    with contextlib.redirect_stdout(said): m._train(train_loader, None)
    hits = {int(c): int(float(n)) for c, n in re.findall(r'successful attacks for class\s+(\d+)\s+->\s+([\d.]+)', said.getvalue())}
    return dict(x=np.stack([x[c].numpy() for c in range(5)]), w=w, old_protos=old_protos, protos=torch.stack(m._protos).detach().numpy(),
                hits=np.array([hits.get(c, 0) for c in range(3)]), alpha=np.array(alpha), steps=np.array(steps), sample_limit=np.array(sample_limit))


def efc_golden(repo:Path, seed:int=0, d:int=8, side:int=4, per_class:int=12, lamb:float=10., damping:float=0.1, sigma:float=0.2) -> dict:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    sys.path.insert(0, str(repo))
    try:
        from continual_learning.ElasticFeatPlusPlus import ElasticFeatPlusPlus
        from continual_learning.utils.empirical_feature_matrix import EmpiricalFeatureMatrix
        from continual_learning.utils.proto import ProtoGenerator
    finally: sys.path.remove(str(repo))
    rng = np.random.RandomState(seed)
    x = np.stack([rng.randn(per_class, 3, side, side).astype(np.float32) + c * 0.4 for c in range(5)])
    w = rng.randn(2, d, 3 * side * side).astype(np.float32) * 0.3
    heads = [rng.randn(3, d).astype(np.float32), rng.randn(2, d).astype(np.float32)]
    class Model(nn.Module):  # their BaseModel's interface: backbone, bias-free heads, (outputs per head, features)
        def __init__(self, k, n_heads):
            super().__init__()
            self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(3 * side * side, d, bias=False)); self.backbone[1].weight.data = torch.from_numpy(w[k])
            self.heads = nn.ModuleList([nn.Sequential(nn.Linear(d, len(h), bias=False)) for h in heads[:n_heads]])
            for h, W in zip(self.heads, heads): h[0].weight.data = torch.from_numpy(W)
        def get_feat_size(self): return d
        def forward(self, z): f = self.backbone(z); return {i: h(f) for i, h in enumerate(self.heads)}, f
    task_dict = {0: [0, 1, 2], 1: [3, 4]}
    loader = lambda t: DataLoader(TensorDataset(torch.from_numpy(np.concatenate([x[c] for c in task_dict[t]])),
                                                torch.tensor([c for c in task_dict[t] for _ in range(per_class)])), batch_size=8, shuffle=False)
    quiet = contextlib.redirect_stdout(io.StringIO())
    old, new = Model(0, 1), Model(1, 2)
    m = EmpiricalFeatureMatrix('cpu', out_path=None)
    with quiet: m.compute(old, loader(0), 0)
    efm = m.get()
    protos = ProtoGenerator('cpu', task_dict, 8, None, d)
    with quiet: protos.compute(old, loader(0), 0)
    a = ElasticFeatPlusPlus.__new__(ElasticFeatPlusPlus)
    a.device, a.efc_lamb, a.damping, a.previous_efm, a.sigma_proto_update, a.proto_generator, a.model = 'cpu', lamb, damping, efm, sigma, protos, new
    f = torch.from_numpy(rng.randn(6, d).astype(np.float32)).requires_grad_(); f_old = torch.from_numpy(rng.randn(6, d).astype(np.float32))
    loss = a.efm_loss(f, f_old); loss.backward()
    with torch.no_grad():
        fs = [(new(b)[1], old(b)[1]) for b, _ in loader(1)]
    drift = a.compute_drift(torch.cat([n for n, _ in fs]), torch.cat([o for _, o in fs]), device='cpu')
    return dict(x=x, w=w, head0=heads[0], head1=heads[1], efm=efm.numpy(), protos=torch.stack(protos.prototype).numpy(),
                covs=torch.stack(protos.running_proto_variance).numpy(), counts=np.array([protos.class_stats[c] for c in range(3)]),
                f=f.detach().numpy(), f_old=f_old.numpy(), efm_loss=np.array(loss.item()), grad=f.grad.numpy(), drift=drift.numpy())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--fecam', type=Path, help="a clone of dipamgoswami/FeCAM")
    p.add_argument('--seed-code', type=Path, help="a clone of grypesc/SEED")
    p.add_argument('--adagauss', type=Path, help="a clone of grypesc/AdaGauss")
    p.add_argument('--ldc', type=Path, help="a clone of alviur/ldc")
    p.add_argument('--efc', type=Path, help="a clone of simomagi/elastic_feature_consolidation")
    p.add_argument('--adc', type=Path, help="a clone of dipamgoswami/ADC")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden')
    a = p.parse_args(argv)
    if not (a.fecam or a.seed_code or a.adagauss or a.ldc or a.efc or a.adc):
        p.error("name at least one method's code: --fecam, --seed-code, --adagauss, --ldc, --efc or --adc PATH")
    if a.fecam:
        feats, test = fecam_inputs()
        g = fecam_golden(a.fecam, feats, test)
        np.savez_compressed(a.out / 'fecam.npz', feats=feats, test=test, commit=np.array(their_commit(a.fecam)), **g)
        print(f"FeCAM: {len(feats)} classes, {len(test)} test vectors -> {a.out / 'fecam.npz'}")
    if a.seed_code:
        inp = seed_inputs()
        g = seed_golden(a.seed_code, inp)
        images = {f'images{c}': im for c, im in enumerate(inp['images'])}
        np.savez_compressed(a.out / 'seed.npz', **images, tasks=np.array([c for t in inp['tasks'] for c in t]),
                            task_sizes=np.array([len(t) for t in inp['tasks']]), test=inp['test'], test_y=inp['test_y'],
                            w=inp['w'], b=inp['b'], commit=np.array(their_commit(a.seed_code)), **g)
        print(f"SEED: {len(inp['images'])} classes in {len(inp['tasks'])} tasks, expert {int(g['chosen'])} chosen -> {a.out / 'seed.npz'}")
    if a.adagauss:
        inp = adagauss_inputs()
        g = adagauss_golden(a.adagauss, inp)
        np.savez_compressed(a.out / 'adagauss.npz', **{f'images{c}': im for c, im in enumerate(inp['images'])},
                            test=inp['test'], test_y=inp['test_y'], w=inp['w'], b=inp['b'], feats=inp['feats'],
                            commit=np.array(their_commit(a.adagauss)), **g)
        print(f"AdaGauss: {len(inp['images'])} classes in {len(inp['tasks'])} tasks, {len(inp['test'])} test images -> {a.out / 'adagauss.npz'}")
    if a.ldc:
        g = ldc_golden(a.ldc)
        np.savez_compressed(a.out / 'ldc.npz', commit=np.array(their_commit(a.ldc)), **g)
        print(f"LDC: 3 old and 2 new classes, {len(g['test'])} test images -> {a.out / 'ldc.npz'}")
    if a.efc:
        g = efc_golden(a.efc)
        np.savez_compressed(a.out / 'efc.npz', commit=np.array(their_commit(a.efc)), **g)
        print(f"EFC++: the feature matrix, loss, prototypes and drift of two tasks -> {a.out / 'efc.npz'}")
    if a.adc:
        g = adc_golden(a.adc)
        np.savez_compressed(a.out / 'adc.npz', commit=np.array(their_commit(a.adc, '.')), **g)
        print(f"ADC: 3 old classes, successful attacks {g['hits'].tolist()} -> {a.out / 'adc.npz'}")


if __name__ == '__main__': main()
