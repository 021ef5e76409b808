#!/usr/bin/env python3
"""torch_step.py: the peer's step of bench_exec_gpu's model, on the same GPU.

    python3 tests/bench/torch_step.py [--mode eager|compile|both] [--steps N] [--peak FLOPS]

The model is bench_exec_gpu's GPT (1,315,819,520 parameters: 24 layers, hidden
2048, 16 heads of 128, ffn 8192, sequence 2048, vocabulary 50304, tied
embeddings, learned positions, LayerNorm with bias, GELU in its tanh form,
GPT-2's initialisation),
8 sequences of synthetic tokens per step, written the way a plain PyTorch
script writes it: fp32 parameters (the master weights), bf16 autocast,
scaled_dot_product_attention (causal), fused AdamW. "eager" runs it as
written, "compile" through torch.compile. The figures are the median step
time of the steps after the first three, tokens/s and MFU on the same count
bench_exec_gpu uses (6 N T + 12 L d s T, PaLM's attention term: Chowdhery et
al. 2022, Appendix B) over the GPU's dense bf16 peak (989 TFLOP/s for the
H100 SXM and the H200, NVIDIA's datasheets), so the two programs' MFU compare
on whichever GPU both ran on. Rows "torch_step,MODE,KEY,VALUE" repeat them
for scripts. Exit 77 without PyTorch or a GPU.
"""
import argparse
import math
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("torch_step: PyTorch is not installed; nothing run")
    sys.exit(77)

LAYERS, HIDDEN, HEADS, FFN, SEQ, VOCAB, BATCH = 24, 2048, 16, 8192, 2048, 50304, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.up = nn.Linear(HIDDEN, FFN)
        self.down = nn.Linear(FFN, HIDDEN)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(SEQ, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(HIDDEN)
        # GPT-2's initialisation (Radford et al. 2019; nanoGPT's _init_weights):
        # weights and embeddings N(0, 0.02), biases 0. PyTorch's default N(0, 1)
        # embedding, tied to the output, puts the first loss near 1000, not ln V.
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # tied
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


def run(mode, steps, peak):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = GPT().to(dev)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(model) if mode == "compile" else model
    idx = torch.randint(0, VOCAB, (BATCH, SEQ), device=dev)
    tgt = torch.randint(0, VOCAB, (BATCH, SEQ), device=dev)
    torch.cuda.reset_peak_memory_stats()
    times, losses = [], []
    t_run = time.perf_counter()
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(idx, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())  # one read a step, as bench_exec_gpu's
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    tokens = BATCH * SEQ
    flops = 6 * params * tokens + 12 * LAYERS * HIDDEN * SEQ * tokens
    med = statistics.median(times[3:])
    ok = all(math.isfinite(x) for x in losses) and abs(losses[0] - math.log(VOCAB)) <= 0.05 * math.log(VOCAB)
    mem = torch.cuda.max_memory_allocated() / 2**30
    print(f"\n{mode}: {params} parameters, {BATCH} x {SEQ} tokens a step, {steps} steps "
          f"(run {time.perf_counter() - t_run:.1f} s, compilation included)")
    print(f"step time     {med:.4f} s median of {len(times) - 3} (fastest {min(times[3:]):.4f})")
    print(f"loss          {losses[0]:.4f} -> {losses[-1]:.4f} (ln V = {math.log(VOCAB):.4f})")
    print(f"tokens/s      {tokens / med:.0f}")
    print(f"MFU           {100 * flops / med / peak:.1f} % of {peak / 1e12:.0f} TFLOP/s "
          f"({flops:.4g} model FLOPs a step)")
    print(f"memory        {mem:.1f} GiB peak allocated")
    for key, value in (("step_s", f"{med:.5f}"), ("tokens_per_s", f"{tokens / med:.0f}"),
                       ("mfu", f"{flops / med / peak:.4f}"), ("peak_mem_gib", f"{mem:.2f}")):
        print(f"torch_step,{mode},{key},{value}")
    del model, opt, fwd
    torch.cuda.empty_cache()
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("eager", "compile", "both"), default="both")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--peak", type=float, default=989e12,
                    help="dense bf16 FLOP/s of the GPU (default the H100 SXM's and H200's 989e12)")
    a = ap.parse_args()
    if a.steps < 4:
        print("torch_step: --steps must be at least 4 (the first three are not timed)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_step: no GPU visible to PyTorch; nothing run")
        return 77
    print(f"device        {torch.cuda.get_device_name(0)}, PyTorch {torch.__version__}")
    rc = 0
    for mode in (("eager", "compile") if a.mode == "both" else (a.mode,)):
        rc |= run(mode, a.steps, a.peak)
    return rc


if __name__ == "__main__":
    sys.exit(main())
