#!/usr/bin/env python
"""Golden values of analytic learning (ACIL, G-ACIL, DS-AL) from their authors' unmodified code.

    python lab/tools/reference/analytic.py --acl PATH/Analytic-continual-learning [--out nbs/golden]

`ZHUANGHP/Analytic-continual-learning` implements ACIL and G-ACIL as one model (`analytic/ACIL.py: ACIL`, whose head is
`analytic/AnalyticLinear.py: RecursiveLinear`: the recursive least-squares update of G-ACIL, equal to ACIL's where no
class returns) and DS-AL as a second one (`analytic/DSAL.py: DSAL`, a main and a compensation stream). Both are built
and fed here as their `main.py` feeds them after the base training: the backbone is a stand-in (a fixed linear map of
4×4 images to 16 features, stored), each phase's images go through `fit` in batches of 8, in order, and `update` runs
before each evaluation. The stream has three phases, classes (0, 1, 2), (3, 4) and (1, 5): class 1 returns in the
last one, the general setting G-ACIL was made for. Recorded after each phase: the head's weights, the test logits and
the predicted classes; and the random expansion as built (from the random state stored before it, so ours draws the
same).
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))
from lab.tools.reference.run_reference import their_commit  # noqa: E402

PHASES = ((0, 1, 2), (3, 4), (1, 5))


def analytic_inputs(seed: int = 0, side: int = 4, d: int = 16, per_class: int = 12, n_test: int = 30) -> dict:
    "Images of six classes (one batch of new images per phase a class is in), test images, and the stand-in backbone."
    rng = np.random.RandomState(seed)
    shift = rng.randn(6, 3, side, side).astype(np.float32)
    x = [np.stack([shift[c] + rng.randn(per_class, 3, side, side).astype(np.float32) for c in phase]) for phase in PHASES]
    test_y = rng.randint(0, 6, n_test)
    test = np.stack([shift[c] + rng.randn(3, side, side).astype(np.float32) for c in test_y])
    w = rng.randn(d, 3 * side * side).astype(np.float32) * 0.3
    return dict(x0=x[0], x1=x[1], x2=x[2], test=test, test_y=test_y, w=w)


def their_package(repo: Path):
    "Their `analytic` package, imported as their `main.py` imports it (their `utils` needs scikit-learn)."
    sys.path.insert(0, str(repo))
    try:
        import analytic
    finally:
        sys.path.remove(str(repo))
    return analytic


def run_theirs(model, inp: dict, fit, head) -> dict:
    "Feed the phases through `fit` in batches of 8; after each, `update` and read the head, the logits and the classes."
    import torch
    out = {}
    test = torch.from_numpy(inp['test'])
    for t, phase in enumerate(PHASES):
        xs = torch.from_numpy(inp[f'x{t}']).flatten(0, 1)  # class by class, in the phase's order
        ys = torch.tensor([c for c in phase for _ in range(inp[f'x{t}'].shape[1])])
        for i in range(0, len(xs), 8):
            fit(xs[i:i + 8], ys[i:i + 8], t)
        model.update()
        logits = model(test)
        out.update({f'head{t}': head().numpy().copy(), f'logits{t}': logits.numpy().copy(), f'pred{t}': logits.argmax(1).numpy()})
    return out


def analytic_golden(repo: Path, inp: dict, buffer: int = 64, gamma: float = 0.1, gamma_comp: float = 0.1, C: float = 1.0, seed: int = 0) -> dict:
    import torch
    from torch import nn
    analytic = their_package(repo)
    backbone = nn.Sequential(nn.Flatten(), nn.Linear(inp['w'].shape[1], inp['w'].shape[0], bias=False))
    backbone[1].weight.data = torch.from_numpy(inp['w'])
    d = inp['w'].shape[0]
    torch.manual_seed(seed)
    rng_acil = torch.get_rng_state()
    acil = analytic.ACIL(d, backbone, buffer, gamma, dtype=torch.double)
    g = dict(rng_acil=rng_acil.numpy(), expansion_acil=acil.buffer.weight.numpy().copy())
    g.update({f'acil_{k}': v for k, v in run_theirs(acil, inp, lambda x, y, t: acil.fit(x, y), lambda: acil.analytic_linear.weight).items()})
    rng_dsal = torch.get_rng_state()
    dsal = analytic.DSAL(d, backbone, buffer, gamma, gamma_comp, C, dtype=torch.double)
    g.update(rng_dsal=rng_dsal.numpy(), expansion_dsal=dsal.buffer.weight.numpy().copy())
    new = [len(set(p) - set(c for q in PHASES[:t] for c in q)) for t, p in enumerate(PHASES)]  # their `phase_size`
    fit = lambda x, y, t: dsal.fit(x, y, increase_size=new[t])
    heads = lambda: torch.cat([dsal.main_stream.weight, dsal.comp_stream.weight], 1)
    g.update({f'dsal_{k}': v for k, v in run_theirs(dsal, inp, fit, heads).items()})
    return g


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--acl', type=Path, required=True, help="a clone of ZHUANGHP/Analytic-continual-learning")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden')
    a = p.parse_args(argv)
    inp = analytic_inputs()
    g = analytic_golden(a.acl, inp)
    np.savez_compressed(a.out / 'analytic.npz', commit=np.array(their_commit(a.acl, 'analytic')), **inp, **g)
    print(f"ACIL and DS-AL: {len(PHASES)} phases, class 1 returning, {len(inp['test'])} test images -> {a.out / 'analytic.npz'}")


if __name__ == '__main__':
    main()
