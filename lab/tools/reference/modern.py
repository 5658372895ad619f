#!/usr/bin/env python
"""Golden values of the exemplar-free methods that came after the paper, from their authors' unmodified code.

    python lab/tools/reference/modern.py --fecam PATH/FeCAM [--out nbs/golden]

FeCAM (`dipamgoswami/FeCAM`, PyCIL-based): its class statistics and its Mahalanobis classifier, from fixed features.
Their learner is built without its constructor (`FeCAM.__new__`) and given the attributes the functions below read;
the data manager and `_extract_vectors` are stand-ins (and `timm`, which their network module imports for ViTs, an
empty module where it is not installed) that hand their functions our fixed features, class by class,
so no network, data loader or GPU is involved. Called, unmodified: `utils/maha_utils.py: compute_new_cov`,
`models/base.py: BaseLearner.shrink_cov, normalize_cov, _tukeys_transform, _maha_dist, _mahalanobis` in the order
`models/fecam.py: FeCAM._train` calls them after a task, and `_eval_maha`'s normalisation of the test vectors.
"""
from __future__ import annotations
import argparse, contextlib, io, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[3]))
from lab.tools.reference.run_reference import their_commit  # noqa: E402


def fecam_inputs(seed:int=0, n_classes:int=5, per_class:int=40, dim:int=12, n_test:int=60):
    "Non-negative features (as after a ReLU) of a few classes with their own scales and correlations, and test features."
    rng = np.random.RandomState(seed)
    mix = [rng.randn(dim, dim) * 0.3 + np.eye(dim) for _ in range(n_classes)]
    feats = np.stack([np.abs(rng.randn(per_class, dim) @ mix[c] + c * 0.5).astype(np.float32) for c in range(n_classes)])
    test = np.abs(rng.randn(n_test, dim) @ mix[0] + rng.randint(0, n_classes, n_test)[:, None] * 0.5).astype(np.float32)
    return feats, test


def fecam_golden(repo:Path, feats, test, beta=0.5, alpha1=1., alpha2=1.) -> dict:
    import torch, types
    for name in ('timm',):  # imported at the top of utils/inc_net.py for its ViT networks, which FeCAM's CNN path never builds
        if name not in sys.modules:
            try: __import__(name)
            except ImportError: sys.modules[name] = types.ModuleType(name)
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--fecam', required=True, type=Path, help="a clone of dipamgoswami/FeCAM")
    p.add_argument('--out', type=Path, default=HERE.parents[3] / 'nbs' / 'golden')
    a = p.parse_args(argv)
    feats, test = fecam_inputs()
    g = fecam_golden(a.fecam, feats, test)
    np.savez_compressed(a.out / 'fecam.npz', feats=feats, test=test, commit=np.array(their_commit(a.fecam)), **g)
    print(f"FeCAM: {len(feats)} classes, {len(test)} test vectors -> {a.out / 'fecam.npz'}")


if __name__ == '__main__': main()
