"""`cce repro` against the same configurations run one by one with `cce allreduce --output-dir`,
compared here with numpy: its classes, ranks-agree flags, pair counts, first differing elements
(index, rank, both values, ulps) and batch-invariance verdicts must be what the outputs show.
The reference is numpy over files cce allreduce wrote, not repro's own code."""
import json
import os

import numpy as np
import pytest

RANKS = [4, 8]
ALGOS = ["ring", "kangaring", "mesh", "rdh"]
SIZES = [4096, 4104]
SEEDS = [1, 2]


def bf16_inputs(ranks, elems, seed=7):
    """Distinct bf16 values per rank and element (as uint16 bits): uniform in (-1, 1)."""
    rng = np.random.default_rng(seed)
    f = rng.uniform(-1, 1, size=(ranks, elems)).astype(np.float32)
    bits = f.view(np.uint32)
    # round to nearest even into bf16's 16 high bits
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def write_ranks(d, arr):
    os.makedirs(d, exist_ok=True)
    for r, row in enumerate(arr):
        row.tofile(os.path.join(d, f"rank{r}.bin"))


def ordinal(bits):
    """bf16 bits → an integer that counts representable values (±0 the same)."""
    b = bits.astype(np.int64)
    mag = b & 0x7FFF
    return np.where(b & 0x8000, -mag, mag)


def outputs_of(run_cli, tmp, inputs, cfg):
    """Runs one configuration with cce allreduce on the first `elems` elements; its outputs."""
    r, n = cfg["ranks"], cfg["elems"]
    src = os.path.join(tmp, f"in-{r}-{n}")
    if not os.path.isdir(src):
        write_ranks(src, inputs[:r, :n])
    out = os.path.join(tmp, f"out-{cfg['index']}")
    args = ["allreduce", "--ranks", r, "--algo", cfg["algo"], "--op", "add", "--dtype", "bf16", "--elems", n,
            "--input-dir", src, "--output-dir", out, "--check", "none", "--rounding", cfg["rounding"]]
    if cfg["seed"] is not None:
        args += ["--seed", cfg["seed"]]
    run_cli(*args)
    return np.stack([np.fromfile(os.path.join(out, f"rank{q}.bin"), dtype=np.uint16) for q in range(r)])


def first_difference(a, b):
    n = min(a.shape[1], b.shape[1])
    ne = a[:, :n] != b[:, :n]
    any_rank = ne.any(axis=0)
    differ = int(any_rank.sum())
    if differ == 0:
        return differ, None
    e = int(np.argmax(any_rank))
    r = int(np.argmax(ne[:, e]))
    return differ, (e, r, int(a[r, e]), int(b[r, e]))


@pytest.fixture(scope="module")
def space(tmp_path_factory, cce_bin):
    import subprocess
    tmp = str(tmp_path_factory.mktemp("repro"))
    inputs = bf16_inputs(max(RANKS), max(SIZES))
    write_ranks(os.path.join(tmp, "inputs"), inputs)
    args = [cce_bin, "repro", "--ranks", ",".join(map(str, RANKS)), "--algo", ",".join(ALGOS), "--elems",
            ",".join(map(str, SIZES)), "--dtype", "bf16", "--rounding", "rne,sr", "--seed", ",".join(map(str, SEEDS)),
            "--input-dir", os.path.join(tmp, "inputs"), "--json"]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return tmp, inputs, json.loads(p.stdout)


def test_repro_equals_one_by_one_runs(space, run_cli):
    tmp, inputs, rep = space
    configs = rep["configs"]
    # every combination of the lists ran (rdh at 4 and 8 ranks is a power of two; mesh ≤ 32)
    assert len(configs) == len(RANKS) * len(ALGOS) * len(SIZES) * (1 + len(SEEDS))
    outs = [outputs_of(run_cli, tmp, inputs, c) for c in configs]
    # ranks agree, per configuration
    for c, o in zip(configs, outs):
        assert c["ranks_agree"] == bool((o == o[0]).all()), c
    # classes: same rank count, same size, the same bytes at every rank
    want = []
    for i, c in enumerate(configs):
        for k in want:
            j = k[0]
            if (configs[j]["ranks"], configs[j]["elems"]) == (c["ranks"], c["elems"]) and np.array_equal(outs[j], outs[i]):
                k.append(i)
                break
        else:
            want.append([i])
    assert sorted(rep["classes"]) == sorted(want)
    assert len(rep["classes"]) > len(RANKS) * 4, "the space has several classes to compare"
    # each class against the first of its inputs: counts and the first difference
    assert rep["pairs"], "pairs were reported"
    for p in rep["pairs"]:
        a, b = outs[p["a"]], outs[p["b"]]
        differ, first = first_difference(a, b)
        assert p["differ"] == differ, p
        assert p["compared"] == min(a.shape[1], b.shape[1])
        if first is None:
            assert p["first"] is None
            continue
        e, r, va, vb = first
        f = p["first"]
        assert (f["element"], f["rank"]) == (e, r)
        assert int(f["a"]["hex"], 16) == va and int(f["b"]["hex"], 16) == vb
        import ml_dtypes
        assert f["a"]["value"] == float(np.uint16(va).view(ml_dtypes.bfloat16))
        assert f["ulps"] == abs(int(ordinal(np.array([va]))[0] - ordinal(np.array([vb]))[0]))
    # every class but the first of each input group was compared with that first
    firsts = {}
    for k in rep["classes"]:
        key = configs[k[0]]["ranks"]
        firsts.setdefault(key, k[0])
    compared = {p["b"] for p in rep["pairs"]}
    for k in rep["classes"]:
        if k[0] != firsts[configs[k[0]]["ranks"]]:
            assert k[0] in compared


def test_batch_invariance_verdicts(space, run_cli):
    tmp, inputs, rep = space
    configs = rep["configs"]
    outs = {c["index"]: outputs_of(run_cli, tmp, inputs, c) for c in configs}
    for algo in ALGOS:
        invariant = True
        for c in configs:
            if c["algo"] != algo or c["elems"] != SIZES[0]:
                continue
            twin = [d for d in configs if d["algo"] == algo and d["elems"] == SIZES[1] and d["ranks"] == c["ranks"]
                    and d["rounding"] == c["rounding"] and d["seed"] == c["seed"]]
            assert len(twin) == 1
            differ, _ = first_difference(outs[c["index"]], outs[twin[0]["index"]])
            invariant &= differ == 0
        assert (algo in rep["invariant"]["elems"]) == invariant, algo


def test_generated_inputs_are_prefix_stable_and_what_repro_runs(tmp_path, run_cli):
    # cce gen's uniform values: element i of seed s does not depend on the count.
    short, long = tmp_path / "s.bin", tmp_path / "l.bin"
    run_cli("gen", "--dtype", "bf16", "--elems", 1000, "--seed", 5, "-o", short)
    run_cli("gen", "--dtype", "bf16", "--elems", 5000, "--seed", 5, "-o", long)
    assert np.array_equal(np.fromfile(short, np.uint16), np.fromfile(long, np.uint16)[:1000])
    # repro's generated inputs are cce gen's (rank r: --seed input_seed + r)
    d = tmp_path / "gen"
    d.mkdir()
    for r in range(4):
        run_cli("gen", "--dtype", "bf16", "--elems", 3000, "--seed", 9 + r, "-o", d / f"rank{r}.bin")
    common = ["repro", "--ranks", 4, "--algo", "ring,kangaring", "--elems", "1000,3000", "--dtype", "bf16", "--json"]
    gen = json.loads(run_cli(*common, "--input-seed", 9).stdout)
    given = json.loads(run_cli(*common, "--input-dir", d).stdout)
    assert gen["classes"] == given["classes"] and gen["pairs"] == given["pairs"]
    assert gen["inputs"] == {"generated": True, "seed": 9}


def test_npy_inputs_equal_bin_inputs(tmp_path, run_cli):
    import ml_dtypes
    arr = bf16_inputs(4, 2048, seed=3)
    write_ranks(tmp_path / "bin", arr)
    os.makedirs(tmp_path / "npy")
    for r, row in enumerate(arr):
        np.save(tmp_path / "npy" / f"rank{r}.npy", row.view(ml_dtypes.bfloat16))
    common = ["repro", "--ranks", 4, "--algo", "ring,mesh", "--elems", "1000,2048", "--dtype", "bf16", "--json"]
    a = json.loads(run_cli(*common, "--input-dir", tmp_path / "bin").stdout)
    b = json.loads(run_cli(*common, "--input-dir", tmp_path / "npy").stdout)
    assert a["classes"] == b["classes"] and a["pairs"] == b["pairs"]


def test_python_repro_equals_the_cli(tmp_path, run_cli):
    import ml_dtypes

    import cce
    arr = bf16_inputs(4, 3000, seed=11)
    write_ranks(tmp_path, arr)
    cli = json.loads(run_cli("repro", "--ranks", 4, "--algo", "ring,kangaring", "--elems", "1000,3000", "--dtype", "bf16",
                             "--rounding", "rne,sr", "--seed", "3,4", "--input-dir", tmp_path, "--json").stdout)
    py = cce.repro(ranks=4, algo=["ring", "kangaring"], elems=[1000, 3000], rounding=["rne", "sr"], seed=[3, 4],
                   inputs=[row.view(ml_dtypes.bfloat16) for row in arr])
    for key in ["classes", "pairs", "invariant", "verdicts"]:
        assert py[key] == cli[key], key
    assert [c["class"] for c in py["configs"]] == [c["class"] for c in cli["configs"]]
    # generated inputs, a sweep given as text
    gen = cce.repro(ranks=[4], algo="mesh", elems="1024:4096", dtype="bf16")
    assert [c["elems"] for c in gen["configs"]] == [1024, 2048, 4096]
    assert list(gen["invariant"]) == ["elems"] and gen["inputs"] == {"generated": True, "seed": 1}


@pytest.mark.parametrize("kwargs, message", [
    (dict(ranks=[], algo="ring", elems=64, dtype="bf16"), "--ranks: the list is empty"),
    (dict(ranks=4, algo=[], elems=64, dtype="bf16"), "--algo: the list is empty"),
    (dict(ranks=4, algo="ring,foo", elems=64, dtype="bf16"), "--algo 'ring,foo': expected"),
    (dict(ranks=4, algo="ring", elems="8:4", dtype="bf16"), "an empty sweep"),
    (dict(ranks=4, algo="ring", elems=64), "dtype= is needed"),
    (dict(ranks=8, algo="ring", inputs=[np.zeros(64, np.float32)] * 4), "--ranks 8: the inputs hold 4 ranks"),
    (dict(ranks=2, algo="ring", inputs=[np.zeros(64, np.float32), np.zeros(32, np.float32)]),
     "rank 1's input holds 128 bytes, rank 0's 256: the inputs must be equally long"),
])
def test_python_repro_refuses_bad_input(kwargs, message):
    import cce
    with pytest.raises(cce.CceError) as e:
        cce.repro(**kwargs)
    assert message in str(e.value)


def test_channels_are_an_axis_whose_classes_are_the_runs_bits(tmp_path, run_cli):
    """--channels / channels=: each configuration's bits are those `cce allreduce --channels C
    --ranks-per-node 4` writes; the classes group exactly the equal outputs; Python equals the CLI."""
    import ml_dtypes

    import cce
    arr = bf16_inputs(8, 1000, seed=13)
    write_ranks(tmp_path / "in", arr)
    common = ["--ranks", 8, "--algo", "ring,ring-2r2w,mesh", "--elems", 1000, "--dtype", "bf16", "--ranks-per-node", 4]
    cli = json.loads(run_cli("repro", *common, "--channels", "1,3,4", "--input-dir", tmp_path / "in", "--json").stdout)
    py = cce.repro(ranks=8, algo=["ring", "ring-2r2w", "mesh"], elems=1000, ranks_per_node=4, channels=[1, 3, 4],
                   inputs=[row.view(ml_dtypes.bfloat16) for row in arr])
    for key in ["classes", "pairs", "invariant", "verdicts", "swept"]:
        assert py[key] == cli[key], key
    assert cli["swept"] == ["algo", "channels"]
    configs = cli["configs"]
    # `channels` (asked) and `label` (ran) as cce allreduce --json gives them: for several only.
    assert [(c["algo"], c.get("channels", 1)) for c in configs] == [
        (a, k) for a in ["ring", "ring-2r2w"] for k in [1, 3, 4]] + [("mesh", 1)]
    assert [c.get("label") for c in configs[:3]] == [None, "ring(3 channels)", "ring(4 channels)"]
    assert [(s["algo"], s["channels"]) for s in cli["skipped"]] == [("mesh", "3"), ("mesh", "4")]
    outs = []
    for c in configs:
        out = tmp_path / f"out-{c['index']}"
        run_cli("allreduce", "--ranks", 8, "--algo", c["algo"], "--channels", c.get("channels", 1), "--ranks-per-node", 4,
                "--op", "add", "--dtype", "bf16", "--input-dir", tmp_path / "in", "--output-dir", out, "--check", "none")
        outs.append(np.stack([np.fromfile(out / f"rank{q}.bin", dtype=np.uint16) for q in range(8)]))
    for i, a in enumerate(outs):
        for j, b in enumerate(outs):
            assert (configs[i]["class"] == configs[j]["class"]) == np.array_equal(a, b), (i, j)
    # The channels move bits over nodes; ring-2r2w keeps ring's at every channel count.
    assert len({c["class"] for c in configs[:3]}) == 3
    assert [c["class"] for c in configs[:3]] == [c["class"] for c in configs[3:6]]
    assert cli["invariant"]["channels"] == []


@pytest.mark.parametrize("kwargs, message", [
    (dict(channels=[1, 33]), "--channels 33: between 1 and 32"),
    (dict(channels=0), "--channels 0: between 1 and 32"),
    (dict(algo="mesh", channels=2), "no configuration of the lists can run (--channels 2 splits the flat ring"),
    (dict(channels=2, compress="gce", ranks_per_node=4),
     "(--channels 2: --compress gce runs the ring of one channel)"),
])
def test_python_repro_refuses_channels_off_the_flat_ring(kwargs, message):
    import cce
    with pytest.raises(cce.CceError) as e:
        cce.repro(**{**dict(ranks=8, algo="ring", elems=64, dtype="bf16"), **kwargs})
    assert message in str(e.value)


def test_all_pairs_compares_every_pair_of_classes(tmp_path, run_cli):
    inputs = bf16_inputs(4, 4104, seed=5)
    write_ranks(tmp_path / "inputs", inputs)
    rep = json.loads(run_cli("repro", "--ranks", 4, "--algo", ",".join(ALGOS), "--elems", "4096,4104", "--dtype", "bf16",
                             "--input-dir", tmp_path / "inputs", "--all-pairs", "--json").stdout)
    configs = rep["configs"]
    outs = [outputs_of(run_cli, str(tmp_path), inputs, c) for c in configs]
    reps = [k[0] for k in rep["classes"]]
    want = {(a, b) for i, a in enumerate(reps) for b in reps[i + 1:]}
    assert {(p["a"], p["b"]) for p in rep["pairs"]} == want
    assert rep["reruns"] > 0
    for p in rep["pairs"]:
        differ, first = first_difference(outs[p["a"]], outs[p["b"]])
        assert p["differ"] == differ
        got = None if p["first"] is None else (p["first"]["element"], p["first"]["rank"])
        assert got == (None if first is None else first[:2])
