"""Host–device synchronisations of every method's training, per optimisation step (lab/nbs/03_gpu: `sync_counts`).

    python lab/benchmarks/syncs.py [--device cpu|cuda]

On CUDA the driver's own report (`torch.cuda.set_sync_debug_mode`) counts every synchronisation, torch's included;
on the CPU the calls of our code that would wait for a GPU (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`, a tensor's
truth value or number, `nonzero`) are counted. Task 1 of each method's miniature, after task 0. A benchmark: it
prints a table and asserts nothing (lab/nbs/03_gpu tests that no site is hit at every step but IL2A's classAug).
"""
import argparse, platform

import torch

from horde_lab.gpu import sync_counts, sync_table


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--device', default='cpu')
    a = p.parse_args()
    torch.set_num_threads(1)
    dev = torch.device(a.device)
    where = torch.cuda.get_device_name(dev) if dev.type == 'cuda' else f"{platform.processor() or platform.machine()} CPU"
    print(f"# synchronisations per method, task 1 of the miniature, on {dev} ({where}), torch {torch.__version__}\n")
    print(sync_table(sync_counts(dev)))


if __name__ == '__main__':
    main()
