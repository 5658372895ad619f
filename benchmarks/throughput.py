"""Training throughput of the backbones under the protocol: images/s for ResNet-18 and Slim ResNet-18
at batch 64 (the reference protocol) and at a large batch, with the device-resident augmentation.

    python benchmarks/throughput.py [--device auto|cpu|cuda] [--large 512] [--steps 20]

A benchmark, not a test: it prints figures and asserts nothing. On CUDA it also compares fp32 with
bf16 autocast + channels_last.
"""
import argparse, platform, time

import torch
import torch.nn.functional as F

from horde_nb.backbones import resnet18, slim_resnet18
from horde_nb.data import DeviceLoader, get_device, synthetic_images, to_device


def images_per_s(make_model, device, batch, steps, amp):
    "Adam training steps on augmented synthetic batches; images/s after two warm-up steps"
    model = make_model().to(device)
    if amp: model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    data = synthetic_images(n_classes=100, per_class=max(1, batch * (steps + 2) // 100 + 1), size=32)
    x, y = to_device(data, device)
    loader = iter(DeviceLoader(x, y, batch_size=batch, drop_last=True, seed=0))
    def step():
        xb, yb = next(loader)
        if amp: xb = xb.contiguous(memory_format=torch.channels_last)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    for _ in range(2): step()
    if device.type == 'cuda': torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps): step()
    if device.type == 'cuda': torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--device', default='auto'); p.add_argument('--large', type=int, default=512)
    p.add_argument('--steps', type=int, default=20)
    a = p.parse_args()
    device = get_device(a.device)
    name = torch.cuda.get_device_name(device) if device.type == 'cuda' else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; torch {torch.__version__}; python {platform.python_version()}")
    precisions = [False, True] if device.type == 'cuda' else [False]
    print(f"{'network':<16}{'batch':>7}{'precision':>22}{'images/s':>12}")
    for label, make in [('ResNet-18', lambda: resnet18(100)), ('Slim ResNet-18', lambda: slim_resnet18(100))]:
        for batch in (64, a.large):
            for amp in precisions:
                ips = images_per_s(make, device, batch, a.steps, amp)
                print(f"{label:<16}{batch:>7}{'bf16+channels_last' if amp else 'fp32':>22}{ips:>12.0f}")


if __name__ == '__main__':
    main()
