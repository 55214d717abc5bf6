"""Benchmark: Hessian-eigenvalue throughput of our one-vector Lanczos against block Lanczos on block HVPs and
against curvlinops + ``scipy.sparse.linalg.eigsh``, side by side in one run (issue 19, item 5).

Solvers, each asked for the top-``k`` eigenvalues by magnitude of the same loss (NLL + weight decay, model in
eval mode, unfused attention) on the same batch, at the same tolerance:

- ``lanczos``: what the spectrum measurement runs (:func:`~model_props.measurements.functional.spectrum.lanczos_top_k`
  on :func:`~model_props.measurements.functional.spectrum.hessian_operator`): one vector per double-backward pass
  through the gradient graph, built once per batch.
- ``block-vjp-B``: block Lanczos (below) with a block of ``B`` vectors per pass: the same retained gradient
  graph, differentiated once for all ``B`` vectors (``torch.autograd.grad(..., is_grads_batched=True)``,
  i.e. ``vmap`` over the vector-Jacobian product of the gradient).
- ``block-fwd-B``: block Lanczos on forward-over-reverse products, ``vmap`` over ``jvp(grad(loss))`` with
  ``torch.func`` (no retained graph: every pass recomputes the forward and the gradient with dual tensors).
- ``curvlinops``: ``curvlinops.HessianLinearOperator`` (forward-over-reverse, vmapped) plus ``wd * v`` for
  the weight-decay term, as a SciPy operator into ARPACK's ``eigsh(which="LM", tol=tol)``.

Block Lanczos computes the same thing as Lanczos: Rayleigh-Ritz on a Krylov space (here the block Krylov
space ``span{V, HV, H^2 V, ...}`` of a random orthonormal ``V``, with full reorthogonalisation), stopped by
the same rule: every wanted Ritz pair has residual ``||H y - theta y|| = ||R_m s_i[last block]||`` below
``tol * |theta_max|``. A residual ``r`` puts an eigenvalue of ``H`` within ``r`` of ``theta``, as for the
one-vector solver. ``--check`` tests every solver against the dense Hessian of tiny nets first.

Timings are wall time per batch, including building the operator (the gradient graph; curvlinops' set-up);
each model's solvers run interleaved, in a rotated order, ``--repeats`` times, and the median is reported,
with ratios against ``lanczos`` (above 1: slower than today's solver). Each solver's eigenvalues are
compared with Lanczos run to a residual of 1e-10 on the same batch. Writes
``benchmarks/results/hessian_throughput.{md,json}``.

    pip install -e .[bench]
    python benchmarks/hessian_throughput.py [--repeats 3] [--blocks 2 4] [--check] [--cache DIR] [--render]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from provenance import record
from torch import nn
from torch.func import functional_call, grad, jvp, vmap

from model_props.config.settings import Settings
from model_props.measurements.functional.spectrum import (
    EigenResult,
    _measurement_state,
    hessian_operator,
    lanczos_top_k,
    top_k_by_magnitude,
    trainable_size,
)
from model_props.measurements.spectrum import spectrum_batches
from model_props.store.model_store import ModelStore
from model_props.training.loop import training_split
from model_props.training.loss import TrainingLoss

RESULTS = Path(__file__).resolve().parent / "results"
BlockHVP = Callable[[torch.Tensor], torch.Tensor]  # (B, P) -> (B, P), one product per row


@contextmanager
def block_vjp_operator(model: nn.Module, x: torch.Tensor, target: torch.Tensor, weight_decay: float) -> Iterator:
    """``H V`` for a block of row vectors: one backward pass through the retained gradient graph for all rows."""
    params = [p for p in model.parameters() if p.requires_grad]
    with _measurement_state(model):
        loss = TrainingLoss.nll(model(x), target) + 0.5 * weight_decay * sum(p.pow(2).sum() for p in params)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        sizes, shapes = [p.numel() for p in params], [p.shape for p in params]

        def hmvp(V: torch.Tensor) -> torch.Tensor:
            chunks = [c.reshape(len(V), *s).to(params[0].dtype) for c, s in zip(V.split(sizes, dim=1), shapes)]
            out = torch.autograd.grad(grads, params, chunks, retain_graph=True, is_grads_batched=True)
            return torch.cat([o.reshape(len(V), -1) for o in out], 1).to(V.dtype)

        yield hmvp


@contextmanager
def block_fwd_operator(model: nn.Module, x: torch.Tensor, target: torch.Tensor, weight_decay: float) -> Iterator:
    """``H V`` by forward-over-reverse: ``vmap`` over ``jvp(grad(loss))`` (torch.func, no retained graph)."""
    named = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    names = list(named)
    sizes, shapes = [p.numel() for p in named.values()], [p.shape for p in named.values()]
    dtype = next(iter(named.values())).dtype

    def loss(params: dict[str, torch.Tensor]) -> torch.Tensor:
        nll = TrainingLoss.nll(functional_call(model, params, (x,)), target)
        return nll + 0.5 * weight_decay * sum(p.pow(2).sum() for p in params.values())

    def hvp(v: torch.Tensor) -> torch.Tensor:
        tangent = {n: c.reshape(s).to(dtype) for n, c, s in zip(names, v.split(sizes), shapes)}
        out = jvp(grad(loss), (named,), (tangent,))[1]
        return torch.cat([out[n].reshape(-1) for n in names]).to(v.dtype)

    with _measurement_state(model):
        yield vmap(hvp)


def block_lanczos_top_k(
    hmvp: BlockHVP, dim: int, k: int, *, block: int, tol: float, max_iter: int = 100, seed: int = 0
) -> EigenResult:
    """Block Lanczos with full reorthogonalisation; ``max_iter`` counts products (vectors), as for Lanczos.

    ``H Q_m = Q_m T_m + Q_{m+1} R_m E_m^T`` with ``T_m`` block tridiagonal (diagonal blocks ``Q_j^T H Q_j``,
    off-diagonal blocks the ``R`` of each block's QR); a Ritz pair ``(theta, Q_m s)`` has residual norm
    ``||R_m s[last block]||``. Stops when every wanted pair's residual is below ``tol * |theta_max|``.
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(dim, block, generator=gen, dtype=torch.float64))
    blocks = [q.T.contiguous()]  # the Lanczos blocks, (block, dim) each
    t = np.zeros((0, 0))
    previous_r = np.zeros((block, block))  # R of the previous block's QR: T's off-diagonal block
    products = 0
    while True:
        current = blocks[-1]
        w = hmvp(current)
        products += block
        a = (current @ w.T).numpy()
        basis = torch.cat(blocks)
        for _ in range(2):  # full reorthogonalisation, twice
            w -= (w @ basis.T) @ basis
        q, r = torch.linalg.qr(w.T)
        m = len(basis)
        grown = np.zeros((m, m))
        grown[: m - block, : m - block] = t
        grown[m - block :, m - block :] = 0.5 * (a + a.T)
        if m > block:
            grown[m - block :, m - 2 * block : m - block] = previous_r
            grown[m - 2 * block : m - block, m - block :] = previous_r.T
        t = grown
        theta, s = np.linalg.eigh(t)
        order = np.argsort(-np.abs(theta), kind="stable")[:k]
        previous_r = r.numpy()
        residuals = np.linalg.norm(previous_r @ s[m - block :, order], axis=0)
        scale = max(float(np.abs(theta).max()), 1e-30)
        if m >= k and np.all(residuals <= tol * scale):
            return EigenResult(theta[order], products, True)
        if products + block > min(max_iter, dim):
            return EigenResult(theta[order], products, False)
        blocks.append(q.T.contiguous())


def curvlinops_eigsh(
    model: nn.Module, x: torch.Tensor, target: torch.Tensor, weight_decay: float, k: int, *, tol: float, seed: int
) -> EigenResult:
    """``eigsh(which="LM")`` on curvlinops' Hessian operator of the mean NLL, plus ``weight_decay * v``."""
    from curvlinops import HessianLinearOperator
    from scipy.sparse.linalg import LinearOperator, eigsh

    params = [p for p in model.parameters() if p.requires_grad]
    with _measurement_state(model):
        hessian = HessianLinearOperator(
            model, nn.CrossEntropyLoss(), params, [(x, target)], check_deterministic=False
        ).to_scipy()
        calls = [0]

        def matvec(v: np.ndarray) -> np.ndarray:
            calls[0] += 1
            return hessian @ v + weight_decay * v

        op = LinearOperator(hessian.shape, matvec=matvec, dtype=np.float64)
        v0 = np.random.default_rng(seed).standard_normal(hessian.shape[0])
        values = eigsh(op, k=k, which="LM", tol=tol, v0=v0, return_eigenvectors=False)
    return EigenResult(top_k_by_magnitude(values, k), calls[0], True)


def solvers(
    blocks: list[int], tol: float, k: int, seed: int, with_curvlinops: bool, max_iter: int = 100
) -> dict[str, Callable]:
    """name -> solve(model, x, target, weight_decay) -> EigenResult, each including its operator's set-up."""

    def lanczos(model, x, target, wd):
        with hessian_operator(model, x, target, nll=TrainingLoss.nll, weight_decay=wd) as hvp:
            return lanczos_top_k(hvp, trainable_size(model), k, tol=tol, max_iter=max_iter, seed=seed)

    def blocked(operator, block):
        def solve(model, x, target, wd):
            with operator(model, x, target, wd) as hmvp:
                dim = trainable_size(model)
                return block_lanczos_top_k(hmvp, dim, k, block=block, tol=tol, max_iter=max_iter, seed=seed)

        return solve

    out: dict[str, Callable] = {"lanczos": lanczos}
    for b in blocks:
        out[f"block-vjp-{b}"] = blocked(block_vjp_operator, b)
    for b in blocks:
        out[f"block-fwd-{b}"] = blocked(block_fwd_operator, b)
    if with_curvlinops:
        out["curvlinops"] = lambda model, x, target, wd: curvlinops_eigsh(model, x, target, wd, k, tol=tol, seed=seed)
    return out


def relative_error(values: np.ndarray, reference: np.ndarray) -> float:
    """Largest difference of the magnitude-sorted eigenvalues, relative to the largest |reference|."""
    a = values[np.argsort(-np.abs(values), kind="stable")]
    b = reference[np.argsort(-np.abs(reference), kind="stable")]
    return float(np.max(np.abs(a - b)) / np.abs(b).max())


def dense_check(blocks: list[int], with_curvlinops: bool, k: int) -> dict[str, float]:
    """Each solver at a tight tolerance against ``eigvalsh`` of the dense Hessian of tiny float64 nets (an MLP
    and a CNN, weight decay on): the largest relative error over the nets."""
    errors: dict[str, float] = {}
    wd = 0.05
    for seed, kind in enumerate(["mlp", "cnn", "mlp", "cnn"]):
        torch.manual_seed(seed)
        if kind == "mlp":
            net = nn.Sequential(nn.Flatten(), nn.Linear(12, 10), nn.Tanh(), nn.Linear(10, 3))
        else:
            net = nn.Sequential(
                nn.Conv2d(3, 8, 2), nn.Softplus(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3)
            )
        net = net.double()
        gen = torch.Generator().manual_seed(seed)
        x, y = torch.randn(6, 3, 2, 2, generator=gen, dtype=torch.float64), torch.randint(0, 3, (6,), generator=gen)
        flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
        names, shapes = [n for n, _ in net.named_parameters()], [p.shape for p in net.parameters()]

        def loss(theta: torch.Tensor, net=net, names=names, shapes=shapes, x=x, y=y) -> torch.Tensor:
            params = dict(zip(names, [c.view(s) for c, s in zip(theta.split([s.numel() for s in shapes]), shapes)]))
            return F.cross_entropy(functional_call(net, params, (x,)), y) + 0.5 * wd * (theta**2).sum()

        dense = np.linalg.eigvalsh(torch.autograd.functional.hessian(loss, flat).numpy())
        expected = top_k_by_magnitude(dense, k)
        for name, solve in solvers(blocks, 1e-10, k, seed, with_curvlinops, max_iter=500).items():
            found = solve(net, x, y, wd).eigenvalues
            errors[name] = max(errors.get(name, 0.0), relative_error(found, expected))
    return errors


def render(info: dict) -> str:
    """The Markdown table of a run (``hessian_throughput.json``): median and best time of each solver, both
    relative to today's Lanczos on the same model (the machine is shared: the best of the repeats is the
    least disturbed by other jobs)."""
    s = info["settings"]
    lines = [
        "# Hessian throughput: one-vector Lanczos against block HVPs and curvlinops + eigsh",
        "",
        "Written by `python benchmarks/hessian_throughput.py --check` (see its docstring). "
        f"Top-{s['k']} eigenvalues by magnitude, tolerance {s['tol']:g}, first spectrum batch "
        f"({s['batch_size']} images) of the smoke references at the end of warm-up; {s['repeats']} interleaved "
        f"repeats in a rotated order, wall time including the operator's set-up, torch threads "
        f"{info['torch_threads']}. Ratio = time / today's Lanczos on the same model (above 1: slower), for the "
        "median and for the best repeat. Error = largest |difference| of the magnitude-sorted eigenvalues from "
        "Lanczos to a residual of 1e-10 on the same batch, relative to |lambda_max|; dense = the same against "
        "eigvalsh of the dense Hessian of tiny float64 nets, every solver at tolerance 1e-10.",
        "",
        "| model | solver | HVPs | median (s) | ratio | best (s) | ratio | s / HVP (best) | error | dense "
        "| top eigenvalues |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    best_base = {r["model"]: min(r["seconds"]) for r in info["rows"] if r["solver"] == "lanczos"}
    for r in info["rows"]:
        best = min(r["seconds"])
        check = "" if r["dense_check"] is None else f"{r['dense_check']:.0e}"
        values = ", ".join(f"{v:.3f}" for v in r["eigenvalues"])
        lines.append(
            f"| {r['model']} | {r['solver']} | {r['hvps']} | {r['median_s']:.1f} | {r['ratio']:.2f} | {best:.1f} | "
            f"{best / best_base[r['model']]:.2f} | {best / r['hvps']:.3f} | {r['max_rel_diff']:.0e} | {check} | "
            f"{values} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", default=["vit", "resnet"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--blocks", nargs="*", type=int, default=[2, 4], help="block sizes of the block solvers")
    p.add_argument("--no-curvlinops", action="store_true", help="skip curvlinops + eigsh (the [bench] extra)")
    p.add_argument("--check", action="store_true", help="first check every solver against dense Hessians")
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--render", action="store_true", help="only rewrite the .md from the last run's .json")
    args = p.parse_args()
    if args.render:
        info = json.loads((RESULTS / "hessian_throughput.json").read_text())
        (RESULTS / "hessian_throughput.md").write_text(render(info))
        return
    settings = Settings(cache_dir=args.cache) if args.cache else Settings()
    store = ModelStore(settings)
    m = store.profile.measurement
    k, tol = m.hessian_top_k, m.hessian_tol
    with_curvlinops = not args.no_curvlinops
    dense = dense_check(args.blocks, with_curvlinops, k) if args.check else {}
    for name, err in dense.items():
        print(f"dense check {name}: max rel. error {err:.1e}", flush=True)
    rows = []
    for model_name in args.models:
        tested = store.get(model_name, "warmup")
        recipe = tested.recipe
        assert recipe is not None  # a reference, trained here by its recipe
        data = store.dataset(recipe.dataset)
        loss = TrainingLoss.of(recipe)
        ((x, target),) = spectrum_batches(
            training_split(recipe, data), loss, 1, m.hessian_batch_size, data.num_classes, seed=0
        )
        model, wd = tested.model, loss.weight_decay
        with hessian_operator(model, x, target, nll=TrainingLoss.nll, weight_decay=wd) as hvp:
            reference = lanczos_top_k(hvp, trainable_size(model), k, tol=1e-10, max_iter=400, seed=1)
        runs = solvers(args.blocks, tol, k, 0, with_curvlinops)
        names = list(runs)
        seconds: dict[str, list[float]] = {n: [] for n in names}
        results: dict[str, EigenResult] = {}
        for rep in range(args.repeats):
            for n in names[rep % len(names) :] + names[: rep % len(names)]:  # rotated, interleaved
                start = time.perf_counter()
                results[n] = runs[n](model, x, target, wd)
                seconds[n].append(time.perf_counter() - start)
                print(f"{model_name} rep {rep} {n}: {seconds[n][-1]:.1f} s, {results[n].hvps} HVPs", flush=True)
        base = statistics.median(seconds["lanczos"])
        for n in names:
            median = statistics.median(seconds[n])
            rows.append(
                {
                    "model": model_name,
                    "solver": n,
                    "dim": trainable_size(model),
                    "hvps": results[n].hvps,
                    "converged": bool(results[n].converged),
                    "seconds": seconds[n],
                    "median_s": median,
                    "s_per_hvp": median / results[n].hvps,
                    "ratio": median / base,
                    "eigenvalues": results[n].eigenvalues.tolist(),
                    "max_rel_diff": relative_error(results[n].eigenvalues, reference.eigenvalues),
                    "dense_check": dense.get(n),
                }
            )
        print(f"{model_name} reference (Lanczos, residual 1e-10): {np.round(reference.eigenvalues, 4)}")
        for r in rows[-len(names) :]:
            print(
                f"{model_name:7s} {r['solver']:12s} {r['median_s']:6.1f} s  x{r['ratio']:.2f}  {r['hvps']:3d} HVPs "
                f"{r['s_per_hvp']:.3f} s/HVP  err {r['max_rel_diff']:.1e}  {np.round(r['eigenvalues'], 3)}",
                flush=True,
            )
    info = {
        "settings": {
            "batch_size": m.hessian_batch_size,
            "k": k,
            "tol": tol,
            "repeats": args.repeats,
            "blocks": args.blocks,
            "checkpoint": "warmup",
        },
        "provenance": record(__file__),
        "torch_threads": torch.get_num_threads(),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "hessian_throughput.json").write_text(json.dumps(info, indent=1) + "\n")
    (RESULTS / "hessian_throughput.md").write_text(render(info))
    print(render(info))


if __name__ == "__main__":
    main()
