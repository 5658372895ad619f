#!/usr/bin/env python
"""Golden values of DPCR from its authors' unmodified code.

    python lab/tools/reference/dpcr.py --dpcr PATH/ICML25-DPCR [--out nbs/golden]

`RHe502/ICML25-DPCR` runs DPCR inside PyCIL's LwF (`models/lwf.py: LwF._train` with `"DPCR": true`). Their
`_train` is called here for two tasks, as their `incremental_train` calls it, with the network training replaced by
stand-ins that train nothing (ours is the paper's LwF): the old and the new network are fixed linear maps of 3×14×14
images to 512 features (their drift estimator is built 512 wide), stored. Task 0 holds classes 0, 1, 2; task 1 holds
3 and 4; 400 images a class, batches of 128 in order. Recorded: the ridge head after each task, the class means and
second moments, the shift matrix of task 1, and the test scores and classes. The inputs are drawn from a seed
(`dpcr_inputs`, redrawn by the test; a slice is stored to check the redraw); the moments and the shift are stored
as their products with a fixed probe, to keep the file small.
"""
from __future__ import annotations
import argparse, contextlib, io, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))
from lab.tools.reference.run_reference import their_commit, stub_absent  # noqa: E402

TASKS = ((0, 1, 2), (3, 4))


def dpcr_inputs(seed: int = 0, side: int = 14, d: int = 512, per_class: int = 400, n_test: int = 60) -> dict:
    "Images of five classes, test images, and the two stand-in networks (old, new)."
    rng = np.random.RandomState(seed)
    shift = rng.randn(5, 3, side, side).astype(np.float32) * 0.5
    x = np.stack([shift[c] + rng.randn(per_class, 3, side, side).astype(np.float32) for c in range(5)])
    test_y = rng.randint(0, 5, n_test)
    test = np.stack([shift[c] + rng.randn(3, side, side).astype(np.float32) for c in test_y])
    w = rng.randn(2, d, 3 * side * side).astype(np.float32) / np.sqrt(3 * side * side)
    w[1] += w[0]  # the new network: the old one moved
    probe = rng.randn(d, 4).astype(np.float32)
    return dict(x=x, test=test, test_y=test_y, w=w.astype(np.float32), probe=probe)


def dpcr_golden(repo: Path, inp: dict, rg: float = 200.0, rg_tssp: float = 1e-9) -> dict:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    stub_absent('timm')  # imported by utils/inc_net.py for ViTs, which the CNN path never builds
    sys.path.insert(0, str(repo))
    try:
        import models.lwf as lwf
        from utils.inc_net import ALClassifier
    finally:
        sys.path.remove(str(repo))
    x, w = torch.from_numpy(inp['x']), inp['w']

    class Net(nn.Module):  # their dict interface over a fixed linear map
        def __init__(self, k):
            super().__init__()
            self.lin = nn.Linear(w.shape[2], w.shape[1], bias=False)
            self.lin.weight.data = torch.from_numpy(w[k])

        def extract_vector(self, z):
            return self.lin(z.flatten(1))

        def forward(self, z):
            return dict(features=self.extract_vector(z), logits=None)

    class Data:  # `_build_protos` asks for one class's unaugmented training images
        def get_dataset(self, classes, source, mode, shot=None, ret_data=False):
            c = int(classes[0])
            n = x.shape[1]
            return None, None, TensorDataset(torch.arange(n), x[c], torch.full((n,), c))

    def loader(classes):
        images = torch.cat([x[c] for c in classes])
        labels = torch.tensor([c for c in classes for _ in range(x.shape[1])])
        return DataLoader(TensorDataset(torch.arange(len(images)), images, labels), batch_size=128, shuffle=False)

    args = dict(DPCR=True, resume=False, rg=rg, rg_tssp=rg_tssp, device=['cpu'], dataset='cifar100', cosine=False)
    m = lwf.LwF.__new__(lwf.LwF)
    m.args, m._device, m.shot, m.data_manager, m.num_per_class = args, 'cpu', None, Data(), 500  # their BaseLearner's 500
    m._protos, m._covs, m._projectors = [], [], []
    m._init_train = m._update_representation = lambda *a: None  # the network training: ours is the paper's LwF
    m.al_classifier = ALClassifier(w.shape[1], len(TASKS[0]), 0, 'cpu', args=args)
    m._cur_task, m._known_classes, m._total_classes = 0, 0, len(TASKS[0])
    m._network, m._old_network = Net(0), None
    out = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        m._train(loader(TASKS[0]), None)
    out.update(head0=m.al_classifier.fc.weight.detach().numpy().copy(), protos0=torch.stack(m._protos).numpy().copy(),
               covs0=torch.stack(m._covs).numpy() @ inp['probe'])
    m._cur_task, m._known_classes, m._total_classes = 1, 3, 5
    m._network, m._old_network = Net(1), Net(0)
    m.al_classifier.augment_class(len(TASKS[1]))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        m._train(loader(TASKS[1]), None)
    with torch.no_grad():
        _, scores = m.al_classifier(Net(1)(torch.from_numpy(inp['test']))['features'])
    out.update(head1=m.al_classifier.fc.weight.detach().numpy().copy(), protos1=torch.stack(m._protos).numpy().copy(),
               covs1=torch.stack(m._covs).numpy() @ inp['probe'], delta=m.projector.get_weight().numpy() @ inp['probe'],
               scores=scores.numpy(), pred=scores.argmax(1).numpy())
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--dpcr', type=Path, required=True, help="a clone of RHe502/ICML25-DPCR")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden')
    a = p.parse_args(argv)
    inp = dpcr_inputs()
    g = dpcr_golden(a.dpcr, inp)
    check = dict(x_slice=inp['x'][:, :2], test_y=inp['test_y'], probe=inp['probe'])
    np.savez_compressed(a.out / 'dpcr.npz', commit=np.array(their_commit(a.dpcr, '.')), **check, **g)
    print(f"DPCR: classes {TASKS[0]} then {TASKS[1]}, {len(inp['test'])} test images -> {a.out / 'dpcr.npz'}")


if __name__ == '__main__':
    main()
