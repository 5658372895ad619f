#!/usr/bin/env python
"""Golden values of HAT-CIR from its authors' unmodified code.

    python lab/tools/reference/hat_cir.py --hat PATH/clvis-chlg-2023 [--out nbs/golden]

`xduan7/clvis-chlg-2023` is the CLVision 2023 entry: its `hat/` package (hard attention masks), its
`models/hat_resnet_18.py` (a slim ResNet-18 of gated convolutions, fragments and ensembles), its
`strategies/sup_contrast.py` (the contrastive loss) and `strategies/classification.py` (prediction from the task
where each class was last seen). Their Avalanche copy does not import under today's PyTorch; the few of its names
those modules import are replaced by empty stand-ins (their code never calls them on the paths run here).

Recorded, for a network of width 2 and 3 tasks (width 4 for the prediction), with task 0 trained and random attention values:
- the weights, drawn from a seed in the order of our names (`fill`), the features of a training forward of task 1 at gate scale 2.5, its penalty, and
  the gradients of every convolution's weight and of task 1's attention after a backward of a fixed probe plus
  0.7 × the penalty;
- the features of an evaluation forward of task 0 at scale 100;
- the same two for fragments = 2, ensembles = 2 over 4 tasks, task 2 started from fragment 0 (their
  `copy_weights_from_previous_fragment`);
- the contrastive loss of random features, the cosine scale schedule at five points;
- their prediction (`Classification.predict_by_all_exp`, logits normalised over the test batches) after three tasks
  whose classes return, with a head of 6 classes.
"""
from __future__ import annotations
import argparse, re, sys, types
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))
from lab.tools.reference.run_reference import their_commit  # noqa: E402

TASKS = ((0, 1, 2), (2, 3), (4, 5, 0))  # classes of the prediction's three tasks: 2 and 0 return


def _stand_ins():
    "Empty stand-ins for the Avalanche names their strategy modules import."
    class Anything:
        def __init__(self, *a, **k): pass
    names = {
        'avalanche': {}, 'avalanche.core': dict(SupervisedPlugin=Anything),
        'avalanche.evaluation': {}, 'avalanche.evaluation.metrics': dict(
            accuracy_metrics=Anything, loss_metrics=Anything, forgetting_metrics=Anything),
        'avalanche.logging': dict(InteractiveLogger=Anything),
        'avalanche.training': {}, 'avalanche.training.plugins': dict(EvaluationPlugin=Anything),
        'avalanche.training.templates': dict(SupervisedTemplate=Anything),
    }
    for name, attrs in names.items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m


def ours(name: str) -> str | None:
    "Their parameter name in our `HATNet`'s terms (None: a slot we do not keep)."
    p = name.split('.')
    if p[0] == 'linear':
        return 'fc.' + '.'.join(p[1:])
    m, rest = p[1], p[2:]
    if p[0] == 'conv1':
        head = 'conv1'
    elif p[0] == 'bn1':
        head = 'bn1'
    else:
        block = 2 * (int(p[0][5:]) - 1) + int(rest[0])
        head, rest = f'blocks.{block}', rest[1:]
        if rest[0] == 'shortcut':
            rest = ['short' if rest[1] == '0' else 'bns'] + rest[2:]
    rest = [r for r in rest if r != 'masker']
    rest = ['trained' if r == '_task_trained' else r for r in rest]
    return '.'.join([f'members.{m}', head] + rest)


def fill(named: dict, seed: int, open_: float = 1.0):
    """Every weight drawn from one seed in the order of our names (so the test redraws them): attention N(open_, 1.5²),
    weights N(0, 0.3²), batch-norm scales 1 + N(0, 0.1²), shifts and means N(0, 0.1²), variances 1 + |N(0, 0.1²)|."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name in sorted(named):
            t, z = named[name], torch.randn(named[name].shape, generator=g)
            last, bn = name.rsplit('.', 1)[-1], re.search(r'\.(bn1|bn2|bns)\.', name)
            if last == 'attention' or '.attention.' in name:
                t.copy_(open_ + z * 1.5)
            elif bn and last == 'weight':
                t.copy_(1 + 0.1 * z)
            elif bn and last == 'running_var':
                t.copy_(1 + 0.1 * z.abs())
            elif bn or last == 'bias':
                t.copy_(0.1 * z)
            else:
                t.copy_(0.3 * z)


def _ours(model, n_tasks: int) -> dict:
    "Their weights and batch-norm statistics under our names (their extra batch norm for task None left out)."
    out = {}
    for k, v in model.state_dict(keep_vars=True).items():
        o = ours(k)
        bn = re.search(r'\.(bn1|bn2|bns)\.(\d+)\.', o)
        if (bn and int(bn.group(2)) >= n_tasks) or k.endswith(('num_batches_tracked', '_task_trained')):
            continue
        out[o] = v.data if isinstance(v, torch.nn.Parameter) else v
    return out


def _grads(model, per: int) -> dict:
    out = {}
    for k, p in model.named_parameters():
        if p.grad is not None and ('conv' in k or 'shortcut.0' in k):
            out['grad.' + ours(k)] = p.grad.clone()
    return out


def network_case(code: Path, fragments: int, ensembles: int, n_tasks: int, task: int) -> dict:
    from hat import HATConfig, HATPayload
    from models.hat_resnet_18 import HATSlimResNet18
    torch.manual_seed(0)
    cfg = HATConfig(num_tasks=n_tasks, max_trn_mask_scale=100, init_strat='dense', grad_comp_factor=100.0)
    net = HATSlimResNet18(6, cfg, nf=2, num_fragments=fragments, num_ensembles=ensembles)
    fill(_ours(net, net.num_tasks_per_fragment), seed=1)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 3, 32, 32, generator=g)
    net.train()
    net.forward_features(HATPayload(x, task_id=0, mask_scale=3.0)).sum().backward()  # task 0 trained
    net.zero_grad()
    net.copy_weights_from_previous_fragment(task_id=task)
    probe = torch.randn(net.linear.in_features, generator=g)
    f = net.forward_features(HATPayload(x, task_id=task, mask_scale=2.5))
    reg = net.get_hat_reg_term(task_id=task, mask_scale=2.5)
    ((f * probe).sum() + 0.7 * reg).backward()
    grads = _grads(net, net.num_tasks_per_fragment)
    net.eval()
    with torch.no_grad():
        f_eval = net.forward_features(HATPayload(x, task_id=0, mask_scale=100.0))
    return dict(x=x, probe=probe, features=f.detach(), reg=torch.as_tensor(float(reg.detach())), eval_features=f_eval,
                **grads)


def loss_case() -> dict:
    from strategies.sup_contrast import SupContrastLoss
    from hat.utils import get_hat_mask_scale
    g = torch.Generator().manual_seed(3)
    feats, labels = torch.randn(10, 2, 16, generator=g), torch.randint(0, 3, (10,), generator=g)
    progress = torch.tensor([0.0, 0.2, 0.5, 0.8, 1.0])
    scales = [get_hat_mask_scale(strat='cosine', progress=float(p), max_trn_mask_scale=100) for p in progress]
    return dict(sc_feats=feats, sc_labels=labels, sc_loss=SupContrastLoss()(feats, labels).detach(),
                progress=progress, scales=torch.tensor(scales))


def predict_inputs() -> tuple:
    "2,500 test images (three batches of their 1,000) and labels, redrawn by the test from their seed."
    g = torch.Generator().manual_seed(5)
    return torch.randn(2500, 3, 32, 32, generator=g), torch.randint(0, 6, (2500,), generator=g)


def predict_case() -> dict:
    "Their prediction from the last task of each class, logits normalised over the test batches."
    from hat import HATConfig
    from models.hat_resnet_18 import HATSlimResNet18
    from strategies.classification import Classification, CumulativeBatchNorm1d
    torch.manual_seed(3)
    cfg = HATConfig(num_tasks=3, max_trn_mask_scale=100, init_strat='dense', grad_comp_factor=100.0)
    net = HATSlimResNet18(6, cfg, nf=4)
    fill(_ours(net, 3), seed=4, open_=2.0)
    test, test_y = predict_inputs()

    class Images(torch.utils.data.Dataset):
        def replace_current_transform_group(self, group): return self
        def __len__(self): return len(test)
        def __getitem__(self, i): return test[i], int(test_y[i]), 0

    me = types.SimpleNamespace(
        model=net.eval(), train_exp_logits_only=True, classes_in_experiences=[list(c) for c in TASKS],
        device=torch.device('cpu'), cw=[1.0, 2.0, 3.0], hat_config=cfg, use_momentum=False, num_momentum=3,
        logit_norm_clf=[CumulativeBatchNorm1d(len(c)) for c in TASKS], logit_calibr='batchnorm')
    with torch.no_grad():
        _, pred, logits, _ = Classification.predict_by_all_exp(me, Images(), tst_time_aug=1)
    return dict(pr_test_slice=test[:2, 0, :4], pr_y=test_y, pr_pred=torch.as_tensor(pred), pr_logits=torch.as_tensor(logits[0]))


def hat_golden(code: Path) -> dict:
    _stand_ins()
    sys.path.insert(0, str(code))
    out = {}
    for key, args in (('one', (1, 1, 3, 1)), ('frag', (2, 2, 4, 2))):
        out.update({f'{key}.{k}': v for k, v in network_case(code, *args).items()})
    out.update(loss_case())
    out.update(predict_case())
    return {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in out.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--hat', type=Path, required=True, help="a clone of xduan7/clvis-chlg-2023")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden')
    a = p.parse_args(argv)
    g = hat_golden(a.hat)
    np.savez_compressed(a.out / 'hat_cir.npz', commit=np.array(their_commit(a.hat, '.')), **g)
    print(f"HAT-CIR: {len(g)} arrays -> {a.out / 'hat_cir.npz'}")


if __name__ == '__main__':
    main()
