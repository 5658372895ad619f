"""Where a run's time goes in the input pipeline and the training step, measured on this machine.

    python lab/benchmarks/throughput.py [--device auto|cpu|cuda] [--steps 10] [--workers 2] [--compile] [--sections 123456789]
                                    [--runs 1,2,4,8,16] [--extractors 1,3,5,7,9] [--out FILE]

A benchmark, not a test: it prints figures (and with --out also writes them to a file) and asserts nothing.
Nine tables, run in the order `--sections` names them (a time box that cuts the benchmark with SIGINT keeps the first
tables whole and ends it with one line and exit status 130):

1. training images/s at batch 64 (the protocol's) of both networks, per memory format and precision
   (bf16 only on CUDA), and with `--compile` the compiled network: its one-off compile time and its speed,
   and after how many steps the compile time is paid back. On CUDA more variants aim at the launch overhead
   that bounds a batch-64 step there: Adam's fused kernel (one launch for all parameters), the training path's
   graphed step (`Stepper`, nbs/03_train/02_config: the whole step recorded once as a CUDA graph and replayed; its speed against the
   eager step) and, with `--compile`, torch's own graphs (`torch.compile(mode='reduce-overhead')`);
2. augmentation-only images/s: our batched on-device pipeline (`DeviceLoader`) against the reference's way
   (torchvision PIL transforms per image in a `DataLoader` with worker processes);
3. training images/s at batch 64 with each pipeline feeding each network;
4. AugMix (FeTrIL's feature-extractor augmentation, severity 5, depth 7) on a batch of 64: torchvision's
   per-image AugMix against our batched one;
5. our ResNet-18 against torchvision's with the same CIFAR stem (3×3 first convolution, no max-pool), in the same
   training step: whether a slow ResNet-18 is our code or the machine;
6. the machine's ceiling: the floating-point operations of one training image of each network (counted by
   `torch.utils.flop_counter`), the speed of the fastest dense fp32 kernel on this device (a large matrix product
   or one of ResNet-18's convolutions), and the images/s that speed would allow, beside the measured speed;
7. several runs at once on one device: N processes (`--runs`), each running the real training step at batch 64
   with its own network and optimiser, measured together after a common start; the aggregate images/s and what
   each run gets. On CUDA with and without MPS (started and stopped here, as the local executor does), eager and
   graphed (the training path's `Stepper`); on a CPU the cores are divided among them. Where MPS starts but does not
   serve a CUDA client (`mps_session` proves it first), its rows say so and are not measured. A run that dies (on a GPU most
   likely out of memory) ends its row at once, with its siblings; the section goes on with the next network or mode,
   and the benchmark's exit status is a failure;
8. Horde's head step at 1–9 extractors (`--extractors`: the initial ResNet-18 FE and k-1 slim slots), the slots
   run one after another (the default, as the authors' code) or as one vmapped call (`stack_fes=True`, nbs/05_methods/horde/00_ensemble), and on
   CUDA each also graphed, as Horde's `train_head` runs it; then a step's cost with the most extractors against the fewest;
9. several runs of one network stacked in one process: N runs' weights stacked and their steps vmapped into one call
   (a convolution of N runs becomes one grouped convolution, so a step launches about as many kernels as one run's),
   eager and, on CUDA, graphed; beside section 7's N processes it decides whether stacking seeds pays (lab/nbs/03_gpu). A row
   out of device memory is reported in its row; the rows with more runs of that network and mode are skipped, the
   others measured, and the benchmark's exit status is a failure.
"""
import argparse, contextlib, copy, io, multiprocessing as mp, os, platform, queue, signal, sys, time
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap
from torch.utils.flop_counter import FlopCounterMode
from PIL import Image

from horde_nb.nets.backbones import resnet18, slim_resnet18
from horde_nb.data.cifar100 import CIFAR100_MEAN, CIFAR100_STD, synthetic_images
from horde_nb.data.augment import BRIGHTNESS, DeviceLoader, get_device, to_device
from horde_nb.data.augmix import augmix
from horde_nb.train.config import TrainConfig
from horde_nb.train.speed import Stepper, WARMUP_STEPS, prepare_model
from horde_nb.nets.backbones import resnet18_fe, slim_fe
from horde_nb.methods.horde.ensemble import HordeEnsemble
from horde_nb.runs.mps import mps_session

def _resnet18(): return resnet18(100)
def _slim(): return slim_resnet18(100)
NETS_ALL = [('ResNet-18', _resnet18), ('Slim ResNet-18', _slim)]  # module-level factories: section 7's processes import them
NETS = list(NETS_ALL)


def torchvision_resnet18():
    "torchvision's ResNet-18 with the CIFAR stem our `resnet18` uses (3×3 stride-1 first convolution, no max-pool)."
    import torchvision  # torchvision is imported only by the sections that use it: it costs seconds in each of section 7's processes
    net = torchvision.models.resnet18(num_classes=100)
    net.conv1, net.maxpool = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False), torch.nn.Identity()
    return net


def _sync(device):
    if device.type == 'cuda': torch.cuda.synchronize()


def _reference_loader(images, labels, batch, workers):
    "The reference's pipeline: PIL transforms image by image in DataLoader workers (pad, RRC, flip, jitter, normalise)."
    import torchvision.transforms as T
    tf = T.Compose([T.Pad(4), T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ColorJitter(brightness=BRIGHTNESS),
                    T.ToTensor(), T.Normalize(CIFAR100_MEAN, CIFAR100_STD)])
    class Set(torch.utils.data.Dataset):
        def __len__(self): return len(labels)
        def __getitem__(self, i): return tf(Image.fromarray(images[i])), int(labels[i])
    return torch.utils.data.DataLoader(Set(), batch_size=batch, shuffle=True, num_workers=workers, drop_last=True)


def _batches(pipeline, device, batch, n, workers):
    data = synthetic_images(n_classes=100, per_class=max(1, batch * n // 100 + 1), size=32)
    if pipeline == 'ours':
        x, y = to_device(data, device)
        return DeviceLoader(x, y, batch_size=batch, drop_last=True, seed=0)
    return _reference_loader(data.x, data.y, batch, workers)


def augmentation_per_s(pipeline, device, batch, steps, workers):
    "Images/s of the input pipeline alone (one pass, the first batch not counted)."
    it = iter(_batches(pipeline, device, batch, steps + 1, workers))
    next(it); _sync(device); t0 = time.perf_counter()
    for _ in range(steps): xb, yb = next(it); xb = xb.to(device)
    _sync(device)
    return batch * steps / (time.perf_counter() - t0)


def train_flops_per_image(make, device, batch=64):
    "Floating-point operations of one forward + backward pass, per image, at `batch`."
    model, x = make().to(device), torch.zeros(batch, 3, 32, 32, device=device)
    with FlopCounterMode(display=False) as fc: F.cross_entropy(model(x), torch.zeros(batch, dtype=torch.long, device=device)).backward()
    return fc.get_total_flops() / batch


def peak_flops_per_s(device, reps=10):
    """Best fp32 FLOP/s of the dense kernels a ResNet-18 step is made of: a 2048² matrix product and, channels-last,
    the forward 3×3 convolution of each ResNet-18 stage at batch 64. No training step can average more."""
    def rate(f, flops):
        f(); _sync(device); t0 = time.perf_counter()
        for _ in range(reps): f()
        _sync(device)
        return flops * reps / (time.perf_counter() - t0)
    a = torch.randn(2048, 2048, device=device)
    best = [(rate(lambda: a @ a, 2 * 2048 ** 3), 'matrix product 2048²')]
    with torch.no_grad():
        for c, hw in ((64, 32), (128, 16), (256, 8), (512, 4)):
            conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).to(device, memory_format=torch.channels_last)
            x = torch.randn(64, c, hw, hw, device=device).to(memory_format=torch.channels_last)
            best.append((rate(lambda: conv(x), 2 * 64 * c * c * 9 * hw * hw), f'3×3 convolution {c}×{hw}²'))
    return max(best)


def training_per_s(make, device, batch, steps, cfg, pipeline='ours', workers=2, mode=None, fused=False, graphs=False):
    """Adam steps fed by a pipeline; images/s after warm-up steps (and the first call's time, for compile).
    With `graphs` the steps go through the training path's `Stepper` (nbs/03_train/02_config) with graphs on: recorded once, then replayed."""
    model = prepare_model(make(), device, cfg)
    if mode: model.compile(mode=mode)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4, fused=fused or None)
    warm = WARMUP_STEPS + 1 if graphs else 3 if mode else 1  # compiled graphs record on the 2nd and 3rd calls; ours after its warm-up
    it = iter(_batches(pipeline, device, batch, steps + warm + 2, workers))
    stepper = Stepper(opt, replace(cfg, graphs=graphs))
    def loss_of(xb, yb):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.precision == 'bf16'):
            return F.cross_entropy(model(xb).float(), yb)
    def step():
        xb, yb = next(it); stepper(loss_of, xb.to(device), yb.to(device))
    t0 = time.perf_counter(); step(); _sync(device); first = time.perf_counter() - t0
    for _ in range(warm): step()
    _sync(device); t0 = time.perf_counter()
    for _ in range(steps): step()
    _sync(device)
    return batch * steps / (time.perf_counter() - t0), first


def _run_worker(net, device, steps, threads, start, out, graphed):
    "One of section 7's runs: warm up, wait for all, then time `steps` training steps (its start and end); `graphed`: `Stepper`'s graphs."
    torch.set_num_threads(threads)
    make = dict(NETS_ALL)[net]
    device = torch.device(device)
    model = prepare_model(make(), device, TrainConfig())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    it = iter(_batches('ours', device, 64, steps + WARMUP_STEPS + 3, 0))
    stepper = Stepper(opt, TrainConfig(graphs=graphed))
    loss_of = lambda xb, yb: F.cross_entropy(model(xb).float(), yb)
    def step(): stepper(loss_of, *next(it))
    for _ in range(WARMUP_STEPS + 1 if graphed else 1): step()
    _sync(device); start.wait()
    t0 = time.perf_counter()
    for _ in range(steps): step()
    _sync(device); out.put((os.getpid(), t0, time.perf_counter()))


class RunDied(Exception): "A run of section 7 exited without its times (e.g. out of device memory)."

def _spans(procs, out):
    """Each run's (start, end) of its timed steps; `RunDied` within a second of a run's death before it sent its times
    (a run that fails after sending them, e.g. as CUDA tears down, measured its steps)."""
    spans = {}
    while len(spans) < len(procs):
        try: pid, *span = out.get(timeout=1); spans[pid] = span
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0) and p.pid not in spans]
            if dead: raise RunDied(f"{len(dead)} of {len(procs)} runs died (exit status {dead[0]}; its error, if it printed one, is above)") from None
    return list(spans.values())


def concurrent_per_s(net, device, n, steps, graphed=False):
    "Aggregate images/s of `n` runs training at once (processes started together), and the slowest run's images/s."
    ctx = mp.get_context('spawn')
    start, out = ctx.Barrier(n), ctx.Queue()
    threads = max(1, (os.cpu_count() or 1) // n) if device.type == 'cpu' else 1
    procs = [ctx.Process(target=_run_worker, args=(net, str(device), steps, threads, start, out, graphed)) for _ in range(n)]
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runs start deaf to a cut's SIGINT (it reaches the whole group):
    try:                                                     # this process ends them, so that none prints a traceback
        for p in procs: p.start()
    finally: signal.signal(signal.SIGINT, ignored)
    try: spans = _spans(procs, out)
    except BaseException:  # the cut (KeyboardInterrupt) or a dead run, whose siblings wait at the barrier: no run outlives the table
        for p in procs: p.terminate()
        raise
    finally:
        for p in procs: p.join()
    wall = max(e for _, e in spans) - min(s for s, _ in spans)
    return n * 64 * steps / wall, min(64 * steps / (e - s) for s, e in spans)


def stacked_runs(models):
    """`models` (one architecture, one per run) as one: their stacked weights (each [N, ...], for one optimiser), their
    stacked buffers (by name; updated in place by a training forward) and a forward from the runs' batches [N, B, ...]
    to their outputs [N, B, ...]."""
    params, buffers = stack_module_state(models)
    # default layout inside vmap: a GPU's convolution asks a slice for its memory format, which vmap cannot answer for
    # channels-last ("querying is_contiguous inside of vmap", the H200 window of 2026-12-04); nbs/05_methods/horde/00_ensemble tests the layout
    params = {k: v.detach().contiguous().requires_grad_(v.requires_grad) for k, v in params.items()}  # still leaves, for Adam
    shape = copy.deepcopy(models[0]).to('meta')  # the architecture without weights: `functional_call` supplies them
    forward = vmap(lambda p, b, x: functional_call(shape, (p, b), (x,)))
    return list(params.values()), buffers, lambda x: forward(params, buffers, x)


def stacked_per_s(make, device, n, steps, graphs=False):
    """Images/s of `n` runs trained as one call in one process: their networks' weights stacked
    (`torch.func.stack_module_state`), the forward vmapped over the runs (a convolution becomes one grouped convolution),
    the runs' mean losses summed (each run's weights get its own loss's gradient) and one Adam over the stacked weights
    (elementwise, so the same updates as `n` Adams). The `n` batches are augmented as one. Also whether a graph was recorded."""
    params, _, forward = stacked_runs([prepare_model(make(), device, TrainConfig()) for _ in range(n)])
    opt = torch.optim.Adam(params, lr=1e-3, weight_decay=1e-4)
    it = iter(_batches('ours', device, 64 * n, steps + WARMUP_STEPS + 2, 0))
    stepper = Stepper(opt, TrainConfig(graphs=graphs))
    def loss_of(xb, yb):
        logits = forward(xb.contiguous().view(n, 64, *xb.shape[1:])).flatten(0, 1)
        return F.cross_entropy(logits.float(), yb, reduction='none').view(n, 64).mean(1).sum()
    def step(): stepper(loss_of, *next(it))
    for _ in range(WARMUP_STEPS + 1 if graphs else 1): step()
    _sync(device); t0 = time.perf_counter()
    for _ in range(steps): step()
    _sync(device)
    return n * 64 * steps / (time.perf_counter() - t0), stepper.captures > 0


def head_step_per_s(k, device, steps, stacked, graphs=False):
    """Horde's head step (features of k frozen FEs, the unified head's CE, Adam) at batch 64, in images/s; `graphs`: through
    `Stepper` with graphs on, as Horde's `train_head` takes it (the features computed inside the recorded step)."""
    torch.manual_seed(0)
    ens = HordeEnsemble(512, 160, 9, n_classes=100, stacked=stacked).to(device)
    ens.set_initial(resnet18_fe().to(device))
    for _ in range(k - 1): ens.add(slim_fe().to(device))
    opt = torch.optim.Adam(ens.head.parameters(), lr=1e-3)
    x, y = torch.randn(64, 3, 32, 32, device=device), torch.randint(0, 100, (64,), device=device)
    stepper = Stepper(opt, TrainConfig(graphs=graphs))
    def loss_of(xb, yb):
        with torch.no_grad(): f = ens.features(xb)
        return F.cross_entropy(ens.head(f), yb)
    for _ in range(WARMUP_STEPS + 1 if graphs else 1): stepper(loss_of, x, y)
    _sync(device); t0 = time.perf_counter()
    for _ in range(steps): stepper(loss_of, x, y)
    _sync(device)
    return 64 * steps / (time.perf_counter() - t0)


class _Tee(io.TextIOBase):
    "stdout and a file at once (--out)."
    def __init__(self, *streams): self.streams = streams
    def write(self, s):
        for st in self.streams: st.write(s)
        return len(s)
    def flush(self):
        for st in self.streams: st.flush()


def training_table(a, device):
    print("1. Training step, batch 64, on-device augmentation (images/s)")
    print(f"{'network':<16}{'setting':>26}{'images/s':>10}{'first call s':>14}")
    variants = [('fp32, NCHW', TrainConfig(channels_last=False)), ('fp32, channels-last', TrainConfig(channels_last=True))]
    if device.type == 'cuda': variants.append(('bf16, channels-last', TrainConfig(precision='bf16')))
    if device.type == 'cuda': variants.append(('fp32, CL, fused Adam', TrainConfig(), dict(fused=True)))
    if a.compile: variants.append(('fp32, channels-last, compile', TrainConfig(compile=True)))
    if device.type == 'cuda': variants.append(('fp32, CL, graphed step', TrainConfig(), dict(graphs=True)))  # the training path's
    if a.compile and device.type == 'cuda':
        variants.append(('fp32, CL, CUDA graphs', TrainConfig(), dict(mode='reduce-overhead')))
    for label, make in NETS:
        eager = None
        for vname, cfg, *kw in variants:
            ips, first = training_per_s(make, device, 64, a.steps, cfg, **(kw[0] if kw else {}))
            eager = ips if vname == 'fp32, channels-last' else eager
            note = ''
            compiled = cfg.compile or (kw and 'mode' in kw[0])
            if compiled and eager and ips > eager:
                pays = (first - 64 / eager) / (64 / eager - 64 / ips)  # steps after which compiling has saved its cost
                note = f"  pays off after ~{pays:.0f} steps ({pays * 64 / 4500:.0f} epochs of a 4,500-image task)"
            elif compiled: note = '  no faster than eager here: never pays off'
            if kw and kw[0].get('graphs') and eager: note = f"  {ips / eager:.2f}x the eager step (target: 1.8x)"
            print(f"{label:<16}{vname:>26}{ips:>10.0f}{first:>14.1f}{note}")


def augmentation_table(a, device):
    print(f"2. Augmentation only, batch 64 (images/s); reference: PIL per image in {a.workers} DataLoader workers")
    ours, ref = (augmentation_per_s(pl, device, 64, a.steps * 3, a.workers) for pl in ('ours', 'reference'))
    print(f"{'ours (batched, on the device)':<34}{ours:>10.0f}\n{'reference (PIL per image, workers)':<34}{ref:>10.0f}"
          f"\n{'ratio':<34}{ours / ref:>10.1f}x")


def pipelines_table(a, device):
    print("3. Training with each pipeline, batch 64, fp32, channels-last where it helps (images/s)")
    print(f"{'network':<16}{'ours':>10}{'reference':>12}")
    for label, make in NETS:
        r = [training_per_s(make, device, 64, a.steps, TrainConfig(), pl, a.workers)[0] for pl in ('ours', 'reference')]
        print(f"{label:<16}{r[0]:>10.0f}{r[1]:>12.0f}")


def augmix_table(a, device):
    print("4. AugMix (severity 5, depth 7) on a batch of 64")
    xb = to_device(synthetic_images(n_classes=64, per_class=1, size=32), device)[0]
    from torchvision.transforms import v2
    am, g = v2.AugMix(severity=5, chain_depth=7), torch.Generator(device=device).manual_seed(0)
    augmix(xb, g); _sync(device)
    t0 = time.perf_counter()
    for _ in range(10): torch.cat([am(xb[i:i + 1]) for i in range(len(xb))])
    _sync(device); per_image = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    for _ in range(10): augmix(xb, g)
    _sync(device); batched = (time.perf_counter() - t0) / 10
    print(f"{'torchvision, per image':<26}{1e3 * per_image:>8.0f} ms\n{'ours, batched':<26}{1e3 * batched:>8.0f} ms"
          f"\n{'speed-up':<26}{per_image / batched:>8.1f}x")


def torchvision_table(a, device):
    print("5. ResNet-18, ours against torchvision's (CIFAR stem), training step at batch 64 (images/s)")
    print(f"{'setting':<22}{'ours':>8}{'torchvision':>13}")
    for vname, cfg in (('fp32, NCHW', TrainConfig(channels_last=False)), ('fp32, channels-last', TrainConfig(channels_last=True))):
        r = [training_per_s(make, device, 64, a.steps, cfg)[0] for make in (_resnet18, torchvision_resnet18)]
        print(f"{vname:<22}{r[0]:>8.0f}{r[1]:>13.0f}")


def ceiling_table(a, device):
    cap = torch.backends.cpu.get_cpu_capability() if device.type == 'cpu' else 'CUDA'
    peak, kernel = peak_flops_per_s(device)
    print(f"6. The machine's ceiling: its fastest dense fp32 kernel ({kernel}) runs at {peak / 1e9:.0f} GFLOP/s "
          f"(vector unit: {cap})")
    print(f"{'network':<16}{'GFLOP per image':>17}{'ceiling img/s':>15}{'measured img/s':>16}{'of ceiling':>12}")
    for label, make in NETS:
        fl = train_flops_per_image(make, device)
        got = training_per_s(make, device, 64, a.steps, TrainConfig(channels_last=True))[0]
        print(f"{label:<16}{fl / 1e9:>17.2f}{peak / fl:>15.0f}{got:>16.0f}{got * fl / peak:>11.0%}")


def concurrent_table(a, device):
    has_mps = device.type == 'cuda' and bool(__import__('shutil').which('nvidia-cuda-mps-control'))
    modes = [('eager', False, False)] + [('eager, MPS', False, True)] * has_mps
    if device.type == 'cuda': modes = [('graphed', True, False)] + [('graphed, MPS', True, True)] * has_mps + modes  # what the campaign trains with first: a time box may cut the rest
    print("7. Runs at once on one device, batch 64 each (aggregate images/s; the slowest run's images/s)"
          + ('' if has_mps or device.type == 'cpu' else '; no MPS on this machine'))
    print(f"{'network':<16}{'mode':>14}{'runs':>6}{'aggregate':>11}{'per run':>9}{'vs 1 run':>10}")
    died = []
    for mname, graphed, mps in modes:
        for label, _ in NETS:
            one = None
            for n in a.runs:
                try:
                    with mps_session(mps and n > 1) if mps else contextlib.nullcontext() as on:
                        if mps and n > 1 and not on:  # MPS does not serve here (the line above says why): plain processes are the other rows
                            print(f"{label:<16}{mname:>14}{n:>6}  not measured: no MPS", flush=True); break
                        agg, slowest = concurrent_per_s(label, device, n, a.steps, graphed)
                except RunDied as e:  # e.g. memory: more runs at once would not fit either, but the other rows still measure
                    print(f"{label:<16}{mname:>14}{n:>6}  {e}", flush=True); died.append(f"{label}, {mname}, {n} runs"); break
                one = one or agg
                print(f"{label:<16}{mname:>14}{n:>6}{agg:>11.0f}{slowest:>9.0f}{agg / one:>9.1f}x", flush=True)
    if died: raise RunDied(f"runs died in row(s) {'; '.join(died)}")


def head_table(a, device):
    print("8. Horde's head step, batch 64: the initial ResNet-18 FE and k-1 slim slots (images/s)")
    variants = [('one after another', False, False), ('stacked (vmap)', True, False)]
    if device.type == 'cuda': variants += [('graphed', False, True), ('graphed, stacked', True, True)]  # as the training path runs it
    print(f"{'extractors':>10}" + ''.join(f"{v:>19}" for v, *_ in variants))
    rates = []
    for k in a.extractors:
        rates.append([head_step_per_s(k, device, a.steps, stacked, graphs) for _, stacked, graphs in variants])
        print(f"{k:>10}" + ''.join(f"{r:>19.0f}" for r in rates[-1]), flush=True)
    if len(rates) > 1:  # a step's cost grows as images/s fall
        print(f"cost of a step with {a.extractors[-1]} against {a.extractors[0]} (target at 9 against 1: at most 1.5x): "
              + ', '.join(f"{v} {r0 / r1:.2f}x" for (v, *_), r0, r1 in zip(variants, rates[0], rates[-1])))


def stacked_table(a, device):
    print("9. Runs stacked in one process, batch 64 each (aggregate images/s; `vs 1 run`: one run's plain eager step)")
    print(f"{'network':<16}{'mode':>18}{'runs':>6}{'aggregate':>11}{'per run':>9}{'vs 1 run':>10}")
    modes = [('stacked', False)] + [('stacked, graphed', True)] * (device.type == 'cuda')
    full = []
    for label, make in NETS:
        one = training_per_s(make, device, 64, a.steps, TrainConfig())[0]
        for mname, graphs in modes:
            for n in a.runs:
                try: agg, recorded = stacked_per_s(make, device, n, a.steps, graphs)
                except torch.OutOfMemoryError as e:  # more runs stacked would not fit either, but the other rows still measure
                    print(f"{label:<16}{mname:>18}{n:>6}  out of memory: {(str(e).strip() or '-').splitlines()[0]}", flush=True)
                    full.append(f"{label}, {mname}, {n} runs"); break
                finally:
                    if device.type == 'cuda': torch.cuda.empty_cache()  # after each row (a failed one's error is gone by now): room for the next
                note = '  (not recorded: eager steps)' if graphs and not recorded else ''
                print(f"{label:<16}{mname:>18}{n:>6}{agg:>11.0f}{agg / n:>9.0f}{agg / one:>9.1f}x{note}", flush=True)
    if full: raise torch.OutOfMemoryError(f"out of memory in row(s) {'; '.join(full)}")


SECTIONS = {'1': training_table, '2': augmentation_table, '3': pipelines_table, '4': augmix_table, '5': torchvision_table,
            '6': ceiling_table, '7': concurrent_table, '8': head_table, '9': stacked_table}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--device', default='auto'); p.add_argument('--steps', type=int, default=10)
    p.add_argument('--workers', type=int, default=2, help="DataLoader workers of the reference pipeline")
    p.add_argument('--compile', action='store_true', help="also time torch.compile (about a minute per network on a CPU)")
    p.add_argument('--sections', default='123456789', help="which numbered sections to run, in this order, e.g. 4 for AugMix alone")
    p.add_argument('--nets', default='resnet18,slim', help="networks of sections 1, 3, 6, 7 and 9: resnet18, slim or both")
    p.add_argument('--runs', default='1,2,4,8,16', help="sections 7 and 9: numbers of runs at once")
    p.add_argument('--extractors', default='1,3,5,7,9', help="section 8: numbers of feature extractors (1-10)")
    p.add_argument('--out', help="also write the tables to this file (e.g. lab/benchmarks/results/<machine>.txt)")
    a = p.parse_args()
    if not a.sections or not set(a.sections) <= set(SECTIONS): p.error(f"--sections takes digits 1-9, got {a.sections!r}")
    try: a.runs, a.extractors = [int(v) for v in a.runs.split(',')], [int(v) for v in a.extractors.split(',')]
    except ValueError: p.error(f"--runs and --extractors take comma-separated integers, got {a.runs!r} and {a.extractors!r}")
    if min(a.runs) < 1 or not 1 <= min(a.extractors) <= max(a.extractors) <= 10: p.error("--runs must be ≥ 1 and --extractors in 1-10")
    nets = [n.strip() for n in a.nets.split(',') if n.strip()]
    if not nets or not set(nets) <= {'resnet18', 'slim'}: p.error(f"--nets takes resnet18, slim or both, got {a.nets!r}")
    if a.out: sys.stdout = _Tee(sys.__stdout__, open(a.out, 'w'))
    NETS[:] = [net for net, key in zip(list(NETS), ('resnet18', 'slim')) if key in nets]
    device = get_device(a.device)
    name = torch.cuda.get_device_name(device) if device.type == 'cuda' else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; torch {torch.__version__}; python {platform.python_version()}")
    failed, s = [], a.sections[0]  # `s` names the section a cut lands in, also one before the loop's first
    try:
        for s in a.sections:  # in the order asked: a time box that cuts the benchmark keeps the first tables whole
            print()
            try: SECTIONS[s](a, device)
            except Exception as e:  # e.g. a step the device refuses to record: the tables after it are still measured
                print(f"section {s} failed: {type(e).__name__}: {e}", flush=True); failed.append(s)
    except KeyboardInterrupt:  # a window's time box (SIGINT, lab/nbs/04_campaign): one line where its rows end, not a traceback
        print(f"\nsection {s} interrupted: its rows above are those measured before the cut", flush=True); sys.exit(130)
    sys.stdout.flush()
    if failed: sys.exit(f"throughput.py: section(s) {', '.join(failed)} failed (their errors are in the tables above)")


if __name__ == '__main__':
    main()
