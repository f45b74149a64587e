#!/usr/bin/env python
"""Run the leafgrad benchmark suite: leafgrad vs torch vs hand-written NumPy.

    python benchmarks/run.py                      # everything, defaults
    python benchmarks/run.py --only W1,W2 --rounds 9 --json out.json

For every workload it first checks that the implementations compute the
same gradients (leafgrad vs torch and vs NumPy, NumPy vs torch; float32,
rtol 1e-4), then times them round-robin (each round times every
implementation once, in rotating order, so machine noise hits all equally),
single-threaded, and reports medians and ratios (median over rounds of the
per-round ratio).  An implementation that
errors, or whose gradients disagree, is reported as such and not timed;
the others still run.

The workloads run in a child process; if it dies (e.g. a segfault from a
deep graph), the workload it was on is re-run without leafgrad and the
suite continues in a fresh child.  See README.md for the workloads/targets.
"""
import _common  # noqa: F401  (pins every math library to one thread; before numpy)
import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

WORKLOADS = {
    "W1": "w1_mlp", "W2": "w2_chain", "W3": "w3_cnn", "W4": "w4_memory",
    "W5": "w5_rnn", "W6": "w6_hvp", "W7": "w7_long_chain", "W8": "w8_import", "W9": "w9_views",
    "W10": "w10_gpt",
}
IMPLS = ("leafgrad", "torch", "numpy", "torch.compile")
DEFAULT_IMPLS = IMPLS[:3]  # torch.compile (compiled variants only) on request: it compiles for minutes
RATIOS = (("leafgrad", "torch"), ("leafgrad", "numpy"), ("numpy", "torch"), ("leafgrad", "torch.compile"))
DEFAULT_JSON = os.path.join(_common.BENCH_DIR, "results", "latest.json")
WARMUP_CALLS = 2
MAX_INNER = 100_000
W8_TORCH_REPEATS = 2   # `import torch` takes 5-10 s here; best of 2 is enough for a reference


# ------------------------------------------------------------------ helpers
def _err(e):
    tb = traceback.extract_tb(e.__traceback__)
    where = ""
    if tb:
        f = tb[-1]
        where = f" [at {os.path.basename(f.filename)}:{f.lineno}]"
    msg = f"{type(e).__name__}: {e}"
    if len(msg) > 300:
        msg = msg[:297] + "..."
    return msg + where


def _ratio(res, a, b):
    x, y = res.get(a), res.get(b)
    if x is None or y is None or y == 0:
        return None
    return x / y


class Impls:
    """The implementations available in this process, and why others are not."""

    def __init__(self, wanted, leafgrad_path=None, as_module=None):
        self.mods, self.status = {}, {}
        self.as_module = as_module
        if "torch" in wanted:
            try:
                self.mods["torch"] = _common.import_torch()
                self.status["torch"] = "ok"
            except Exception as e:  # noqa: BLE001
                self.status["torch"] = "unavailable: " + _err(e)
        if "leafgrad" in wanted:
            try:
                mod, why = _common.load_leafgrad(leafgrad_path, as_module)
            except Exception as e:  # noqa: BLE001
                mod, why = None, _err(e)
            if mod is None:
                self.status["leafgrad"] = "unavailable: " + why
            else:
                self.mods["leafgrad"] = mod
                self.status["leafgrad"] = "ok"
        if "numpy" in wanted:
            self.mods["numpy"] = np
            self.status["numpy"] = "ok"
        if "torch.compile" in wanted:
            if "torch" in self.mods:
                self.mods["torch.compile"] = _common.TorchCompile(self.mods["torch"])
            self.status["torch.compile"] = self.status.get("torch", "unavailable: torch not requested")
        _common.limit_threads()
        self.order = [i for i in IMPLS if i in self.mods]


# ------------------------------------------------------------------ gradient check
def grad_check(mod, impls):
    """Returns (status per impl, report).  status is 'ok' or a reason."""
    status, grads, report = {}, {}, {}
    for impl in impls.order:
        if impl == "numpy" and getattr(mod, "grads_numpy", None) is None or impl == "torch.compile":
            continue
        try:
            if impl == "numpy":
                grads[impl] = mod.grads_numpy()
            else:
                grads[impl] = mod.grads(impls.mods[impl])
            status[impl] = "ok"
        except Exception as e:  # noqa: BLE001
            status[impl] = "error: " + _err(e)
    for a, b in (("leafgrad", "torch"), ("leafgrad", "numpy"), ("numpy", "torch")):
        if a in grads and b in grads:
            ok, worst, detail = _common.compare(grads[a], grads[b])
            report[f"{a}~{b}"] = {"ok": ok, "max_scaled_err": worst, "detail": detail}
            if not ok:
                if a == "leafgrad":
                    prev = status["leafgrad"]
                    msg = f"vs {b} ({worst:.1e}: {', '.join(f'{k} {v}' for k, v in detail.items())})"
                    status["leafgrad"] = (prev + ", " + msg if prev.startswith("grad mismatch")
                                          else "grad mismatch " + msg)
                elif status.get("numpy") == "ok":
                    status["numpy"] = f"grad mismatch vs torch ({worst:.1e}) -- harness bug"
    return status, report


# ------------------------------------------------------------------ workload kinds
def run_timed(mod, impls, status, args, log):
    variants = {}
    setups = {}
    for vname, unit, factor in mod.VARIANTS:
        vres = variants[vname] = {"unit": unit, "impls": {}}
        for impl in impls.order:
            if impl == "numpy" and getattr(mod, "make_numpy", None) is None:
                continue
            if impl == "torch.compile" and not vname.startswith("compiled"):
                continue
            if status.get(impl, "ok") != "ok":
                vres["impls"][impl] = {"status": status[impl]}
                continue
            try:
                obj = (mod.make_numpy(0, vname) if impl == "numpy"
                       else mod.make(impls.mods[impl], 0, vname))
                prepare, fn = obj if isinstance(obj, tuple) else (None, obj)
                for _ in range(getattr(mod, "WARMUP_CALLS", WARMUP_CALLS)):
                    _common.time_calls(fn, 1, prepare)
                n = getattr(mod, "INNER_CALLS", None)
                if n is None:  # calibrate: one sample ~ args.sample_time seconds
                    t1 = _common.time_calls(fn, 1, prepare)
                    n = int(min(MAX_INNER, max(1, round(args.sample_time / max(t1, 1e-9)))))
                setups[(vname, impl)] = (prepare, fn, n)
                vres["impls"][impl] = {"status": "ok", "inner_calls": n, "samples": []}
            except Exception as e:  # noqa: BLE001
                vres["impls"][impl] = {"status": "error: " + _err(e)}
    rounds = min(args.rounds, getattr(mod, "MAX_ROUNDS", args.rounds))
    _common.gc_settle()
    try:
        for r in range(rounds):
            order = impls.order[r % len(impls.order):] + impls.order[:r % len(impls.order)]
            for vname, unit, factor in mod.VARIANTS:
                for impl in order:
                    if (vname, impl) not in setups:
                        continue
                    ent = variants[vname]["impls"][impl]
                    if ent["status"] != "ok":
                        continue
                    prepare, fn, n = setups[(vname, impl)]
                    try:
                        ent["samples"].append(_common.time_calls(fn, n, prepare) / n * factor)
                    except Exception as e:  # noqa: BLE001
                        ent["status"] = "error while timing: " + _err(e)
            log(f"  round {r + 1}/{rounds} done")
    finally:
        setups.clear()
        _common.gc_unsettle()
    for vname, unit, factor in mod.VARIANTS:
        for impl, ent in variants[vname]["impls"].items():
            if ent.get("status") == "ok" and ent["samples"]:
                ent["median"] = statistics.median(ent["samples"])
                ent["min"] = min(ent["samples"])
                ent["max"] = max(ent["samples"])
    return variants


def run_memory(mod, impls, status, args, log):
    (vname, unit, _), = mod.VARIANTS
    vres = {"unit": unit, "impls": {}}
    for impl in impls.order:
        if impl == "torch.compile":
            continue
        if status.get(impl, "ok") != "ok":
            vres["impls"][impl] = {"status": status[impl]}
            continue
        res, err = mod.measure_in_subprocess(
            impl, leafgrad_path=args.leafgrad_path,
            as_module=args.impl_as_leafgrad if impl == "leafgrad" else None)
        if err:
            vres["impls"][impl] = {"status": "error: " + err}
        else:
            vres["impls"][impl] = dict(res, status="ok", median=res["rss_delta_mib"])
        log(f"  {impl}: {vres['impls'][impl].get('median', vres['impls'][impl]['status'])}")
    return {vname: vres}


def run_import(mod, impls, status, args, log):
    (vname, unit, _), = mod.VARIANTS
    vres = {"unit": unit, "impls": {}, "extra": {}}
    for impl in impls.order:
        if impl == "torch.compile":
            continue
        if status.get(impl, "ok") != "ok":
            vres["impls"][impl] = {"status": status[impl]}
            continue
        name = {"leafgrad": args.impl_as_leafgrad or "leafgrad"}.get(impl, impl)
        path = (args.leafgrad_path or _common.REPO_ROOT) if impl == "leafgrad" else None
        reps = W8_TORCH_REPEATS if name == "torch" else mod.REPEATS
        best, err = mod.time_import(name, path, reps)
        vres["impls"][impl] = ({"status": "error: " + err} if err else
                               {"status": "ok", "median": best, "best_of": reps})
        log(f"  import {name}: {best if best is not None else err}")
    if vres["impls"].get("leafgrad", {}).get("status") == "ok" and not args.impl_as_leafgrad:
        best, err = mod.time_runner(args.leafgrad_path or _common.REPO_ROOT)
        vres["extra"]["python -m leafgrad"], vres["extra"]["leafgrad cpu"] = best or (None, None)
        log(f"  python -m leafgrad runner and torch finder, import leafgrad cpu: {best or err}")
    return {vname: vres}


def verdicts(wid, mod, res):
    """Fill ratios and target verdicts into res['variants']."""
    for vname, vres in res["variants"].items():
        med = {i: e.get("median") for i, e in vres["impls"].items()}
        vres["ratio_of_medians"] = {f"{a}/{b}": _ratio(med, a, b) for a, b in RATIOS}
        vres["ratios"] = {}
        for a, b in RATIOS:
            # Median of per-round ratios: the two samples of a round were taken
            # back to back, so load that drifts over the run cancels out.
            sa = vres["impls"].get(a, {}).get("samples")
            sb = vres["impls"].get(b, {}).get("samples")
            if sa and sb and len(sa) == len(sb) and med.get(a) and med.get(b):
                vres["ratios"][f"{a}/{b}"] = statistics.median(x / y for x, y in zip(sa, sb))
            else:
                vres["ratios"][f"{a}/{b}"] = vres["ratio_of_medians"][f"{a}/{b}"]
        lg = vres["impls"].get("leafgrad", {})
        if mod.KIND == "import":
            vres["target"] = mod.TARGET
            vres["verdict"] = ("n/a" if med.get("leafgrad") is None
                               else "PASS" if med["leafgrad"] <= mod.TARGET_MS else "FAIL")
            continue
        tgt = getattr(mod, "TARGETS", {}).get(vname)
        if tgt is None:
            continue
        key, limit = tgt
        vres["target"] = f"{key} <= {limit}"
        r = vres["ratios"].get(key)
        if r is not None:
            vres["verdict"] = "PASS" if r <= limit else "FAIL"
        elif lg.get("status", "").startswith(("grad mismatch", "error", "crashed")):
            vres["verdict"] = "FAIL"
        else:
            vres["verdict"] = "n/a"
    if wid == "W7":
        first, last = mod.VARIANTS[0][0], mod.VARIANTS[-1][0]
        lin = {}
        for impl in ("leafgrad", "torch"):
            # best (min) per-node times: a scaling check should not hinge on load noise
            a = res["variants"][first]["impls"].get(impl, {}).get("min")
            b = res["variants"][last]["impls"].get(impl, {}).get("min")
            lin[impl] = b / a if a and b else None
        res["linearity"] = lin   # per-node time at the longest / shortest chain
        lgs = [res["variants"][v]["impls"].get("leafgrad", {}) for v, _, _ in mod.VARIANTS]
        v = res["variants"][last]
        v["target"] = f"completes, linear (<= {mod.LINEAR_MAX})"
        if all(e.get("status") == "ok" and e.get("median") for e in lgs):
            v["verdict"] = "PASS" if lin["leafgrad"] <= mod.LINEAR_MAX else "FAIL"
        elif any(e.get("status", "").startswith(("error", "grad mismatch")) for e in lgs):
            v["verdict"] = "FAIL"
        else:
            v["verdict"] = "n/a"


def run_workload(wid, impls, args, log=print):
    mod = importlib.import_module(WORKLOADS[wid])
    res = {"id": wid, "title": mod.TITLE, "kind": mod.KIND}
    log(f"[{wid}] {mod.TITLE}")
    status = {}
    if mod.KIND in ("timed", "memory"):
        status, report = grad_check(mod, impls)
        res["grad_check"] = report
        for k, rep in report.items():
            log(f"  grad check {k}: {'ok' if rep['ok'] else 'MISMATCH'} "
                f"(max scaled err {rep['max_scaled_err']:.1e})")
        for impl, s in status.items():
            if s != "ok":
                log(f"  {impl}: {s}")
    for impl in IMPLS:
        if impl not in impls.mods and impl in impls.status:
            status[impl] = impls.status[impl]
    res["status"] = status
    gc.collect()
    kinds = {"timed": run_timed, "memory": run_memory, "import": run_import}
    res["variants"] = kinds[mod.KIND](mod, impls, status, args, log)
    for vres in res["variants"].values():
        for impl in IMPLS:
            if impl not in vres["impls"] and impl in status and status[impl] != "ok":
                vres["impls"][impl] = {"status": status[impl]}
    verdicts(wid, mod, res)
    return res


# ------------------------------------------------------------------ child process / parent
def child_main(args):
    wanted = args.impls.split(",")
    impls = Impls(wanted, args.leafgrad_path, args.impl_as_leafgrad)
    with open(args.progress, "a") as prog:
        prog.write(json.dumps({"impls": impls.status, "threads": _common.limit_threads(
            impls.mods.get("torch"))}) + "\n")
        prog.flush()
        for wid in args.only.split(","):
            prog.write(json.dumps({"start": wid}) + "\n")
            prog.flush()
            t0 = time.perf_counter()
            try:
                res = run_workload(wid, impls, args, log=lambda s: print(s, flush=True))
            except Exception as e:  # noqa: BLE001
                res = {"id": wid, "error": _err(e)}
                print(f"[{wid}] failed: {res['error']}", flush=True)
            res["wall_s"] = time.perf_counter() - t0
            prog.write(json.dumps({"result": wid, "data": res}) + "\n")
            prog.flush()
    return 0


def _spawn(wids, impls, args):
    fd, prog = tempfile.mkstemp(prefix="leafgrad-bench-", suffix=".jsonl")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--progress", prog,
           "--only", ",".join(wids), "--impls", ",".join(impls),
           "--rounds", str(args.rounds), "--sample-time", str(args.sample_time), "--clock", args.clock]
    if args.leafgrad_path:
        cmd += ["--leafgrad-path", args.leafgrad_path]
    if args.impl_as_leafgrad:
        cmd += ["--impl-as-leafgrad", args.impl_as_leafgrad]
    rc = subprocess.call(cmd)
    lines = []
    with open(prog) as f:
        for line in f:
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass
    os.unlink(prog)
    return rc, lines


def run_isolated(wids, args):
    """Run workloads in child processes; survive a child crash."""
    results, meta = {}, {}
    remaining = list(wids)
    impls = args.impls.split(",")
    leafgrad_crash = None
    while remaining:
        rc, lines = _spawn(remaining, impls, args)
        started = None
        for ent in lines:
            if "impls" in ent and not meta:
                meta = ent
            elif "start" in ent:
                started = ent["start"]
            elif "result" in ent:
                results[ent["result"]] = ent["data"]
                remaining.remove(ent["result"])
                started = None
        if rc == 0 and not remaining:
            break
        why = f"child process died (rc={rc})"
        if started is None:
            if "leafgrad" in impls:   # died while loading leafgrad: go on without it
                print(f"{why} before any workload started; continuing without leafgrad",
                      flush=True)
                impls = [i for i in impls if i != "leafgrad"]
                meta = {}
                leafgrad_crash = "crashed: " + why + " while loading"
                continue
            for wid in remaining:
                results[wid] = {"id": wid, "error": why}
            break
        print(f"[{started}] {why}", flush=True)
        remaining.remove(started)
        if "leafgrad" in impls:
            print(f"[{started}] re-running without leafgrad", flush=True)
            rc2, lines2 = _spawn([started], [i for i in impls if i != "leafgrad"], args)
            data = next((e["data"] for e in lines2 if "result" in e), None)
            if data is None:
                data = {"id": started, "error": f"{why}; and without leafgrad rc={rc2}"}
            else:
                data.setdefault("status", {})["leafgrad"] = "crashed: " + why
                for vres in data.get("variants", {}).values():
                    vres["impls"]["leafgrad"] = {"status": "crashed: " + why}
                    if "verdict" in vres:
                        vres["verdict"] = "FAIL"
            results[started] = data
        else:
            results[started] = {"id": started, "error": why}
    if leafgrad_crash:
        meta.setdefault("impls", {})["leafgrad"] = leafgrad_crash
        for data in results.values():
            for vres in data.get("variants", {}).values():
                vres["impls"]["leafgrad"] = {"status": leafgrad_crash}
                if "verdict" in vres:
                    vres["verdict"] = "FAIL"
    return results, meta


# ------------------------------------------------------------------ reporting
def _fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.3f}"
    return f"{x:.4f}"


def print_table(results, meta):
    lg = meta.get("impls", {}).get("leafgrad", "not requested")
    label = "leafgrad"
    if meta.get("leafgrad_as"):
        label = f"leafgrad[={meta['leafgrad_as']}]"
        print(f"!! HARNESS TEST MODE: the 'leafgrad' column is {meta['leafgrad_as']}, not leafgrad !!")
    print(f"leafgrad: {lg}")
    print(f"torch {meta.get('torch_version')}  numpy {meta.get('numpy_version')}  "
          f"python {meta.get('python')}  rounds={meta.get('rounds')}  threads=1  clock={meta.get('clock', 'wall')}")
    shown = [i for i in IMPLS if i != "torch.compile" or "torch.compile" in meta.get("impls", {})]
    ratios = [("leafgrad/torch", "lg/torch"), ("leafgrad/numpy", "lg/numpy"), ("numpy/torch", "np/torch"),
              ("leafgrad/torch.compile", "lg/tc")][:len(shown)]
    head = ("workload", "unit", label, *shown[1:], *(short for _, short in ratios), "target", "verdict")
    target_col = len(head) - 2
    rows = []
    notes = []
    for wid, res in results.items():
        if "error" in res:
            rows.append((wid,) + ("",) * (len(head) - 2) + ("ERROR",))
            notes.append(f"{wid}: {res['error']}")
            continue
        for vname, v in res["variants"].items():
            cells = []
            for impl in shown:
                e = v["impls"].get(impl)
                if e is None:
                    cells.append("")
                elif e.get("median") is not None:
                    cells.append(_fmt(e["median"]))
                else:
                    s = e.get("status", "n/a")
                    cells.append("n/a" if s.startswith("unavailable") else
                                 "MISMATCH" if s.startswith("grad mismatch") else
                                 "CRASH" if s.startswith("crashed") else "ERROR")
                    if not s.startswith("unavailable"):
                        notes.append(f"{wid} {vname} {impl}: {s}")
            r = v.get("ratios", {})
            rows.append((f"{wid} {vname}", v["unit"], *cells, *(_fmt(r.get(key)) for key, _ in ratios),
                         v.get("target", ""), v.get("verdict", "")))
        if wid == "W7" and res.get("linearity"):
            li = res["linearity"]
            notes.append("W7 linearity, best per-node time 100k / 10k: " + ", ".join(
                f"{k} {_fmt(x)}" for k, x in li.items()))
        if wid == "W4":
            v = next(iter(res["variants"].values()))
            tm = {i: e.get("tracemalloc_mib") for i, e in v["impls"].items()
                  if e.get("tracemalloc_mib") is not None}
            if tm:
                notes.append("W4 tracemalloc peak MiB: " + ", ".join(
                    f"{k} {_fmt(x)}" for k, x in tm.items()))
        if wid == "W8":
            v = next(iter(res["variants"].values()))
            notes.append(f"W8 import leafgrad in CPU time: {_fmt(v['extra'].get('leafgrad cpu'))} ms above numpy; "
                         "python -m leafgrad (runner, torch finder, import torch) adds "
                         f"{_fmt(v['extra'].get('python -m leafgrad'))} ms")
    widths = [max(len(str(row[i])) for row in rows + [head]) for i in range(len(head))]
    line = "  ".join(f"{{:{'<' if i in (0, 1, target_col) else '>'}{w}}}" for i, w in enumerate(widths))
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))
    for n in dict.fromkeys(notes):
        print("  * " + n)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(WORKLOADS),
                    help="comma-separated workloads (default: all): " + ",".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=7,
                    help="timing rounds; each round times every implementation once "
                         "(default 7; W7 uses at most 3)")
    ap.add_argument("--sample-time", type=float, default=0.1,
                    help="target seconds per timing sample (default 0.1)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time samples by wall clock (default) or by the process's CPU time "
                         "(time.process_time: on a loaded machine, what other processes take is not counted)")
    ap.add_argument("--json", default=DEFAULT_JSON, help="results file (default results/latest.json)")
    ap.add_argument("--impls", default=",".join(DEFAULT_IMPLS),
                    help="subset of leafgrad,torch,numpy,torch.compile (default: the first three; "
                         "torch.compile times the compiled variants, after minutes of compiling)")
    ap.add_argument("--leafgrad-path",
                    help="directory containing the leafgrad package (default: this checkout)")
    ap.add_argument("--no-isolate", action="store_true",
                    help="run in this process (a crash then kills the whole run)")
    # Harness self-test: run the T-style code with another module under the
    # 'leafgrad' label.  Output is loudly marked; never use for real numbers.
    ap.add_argument("--impl-as-leafgrad", help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    only = [w.strip().upper() for w in args.only.split(",") if w.strip()]
    bad = [w for w in only if w not in WORKLOADS]
    if bad:
        ap.error(f"unknown workload(s) {bad}; choose from {list(WORKLOADS)}")
    args.only = ",".join(only)
    bad = [i for i in args.impls.split(",") if i not in IMPLS]
    if bad:
        ap.error(f"unknown implementation(s) {bad}")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.clock == "cpu":
        _common.clock = time.process_time
    if args.child:
        return child_main(args)
    t0 = time.perf_counter()
    wids = args.only.split(",")
    if args.no_isolate:
        impls = Impls(args.impls.split(","), args.leafgrad_path, args.impl_as_leafgrad)
        meta = {"impls": impls.status, "threads": _common.limit_threads(impls.mods.get("torch"))}
        results = {}
        for wid in wids:
            try:
                results[wid] = run_workload(wid, impls, args)
            except Exception as e:  # noqa: BLE001
                results[wid] = {"id": wid, "error": _err(e)}
    else:
        results, meta = run_isolated(wids, args)
    try:
        from importlib.metadata import version
        torch_version = version("torch")
    except Exception:  # noqa: BLE001
        torch_version = None
    meta.update({
        "leafgrad_as": args.impl_as_leafgrad,
        "torch_version": torch_version,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "clock": args.clock,
        "sample_time_s": args.sample_time,
        "rtol": _common.RTOL,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "wall_s": time.perf_counter() - t0,
    })
    print()
    print_table(results, meta)
    out = {"meta": meta, "workloads": results}
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
        print(f"\nwrote {args.json}  ({meta['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
