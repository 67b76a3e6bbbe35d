"""Diagonal channels in a 2D mesh (seed 003): the patent's claims, then the same on the fabric.

1. The patent's example: (0,0)->(3,3) on a 4x4 mesh takes 6 hops / 7 routers, 3 hops /
   4 routers with diagonals [0002].
2. Its zero-load delay model (router delay = wire delay per pitch) gives "about 20% on
   average and about 40% for diagonal traffic" [0002]; the table reproduces it.
3. The cycle-level fabric (one cycle per router, wire folded into the clock) measured on
   single packets, with 1- and 2-cycle diagonal hops.
4. Latency against offered load and saturation throughput, mesh vs mesh+diag, uniform and
   transpose traffic: our extension, the patent has no load data.

Run: python examples/noc_diagonal_channels.py [--size 8] [--window 600] [--plot out.png]
"""

from __future__ import annotations

import argparse

import wafersim as ws


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=8, help="side of the fabric for parts 3-4")
    ap.add_argument("--window", type=int, default=600, help="measured cycles per load point")
    ap.add_argument("--plot", help="write a PNG of the load curves")
    args = ap.parse_args()
    n = args.size

    c = ws.noc.compare("corner", 4)
    print("1. (0,0)->(3,3) on 4x4 [0002]:")
    print(f"   mesh      {c.mesh.hops:.0f} hops, {c.mesh.routers:.0f} routers, wire {c.mesh.wire:.2f}, "
          f"latency {c.mesh.latency:.2f} units")
    print(f"   mesh+diag {c.diag.hops:.0f} hops, {c.diag.routers:.0f} routers, wire {c.diag.wire:.2f}, "
          f"latency {c.diag.latency:.2f} units  ({100 * c.latency_cut:.1f}% less)")

    print("\n2. Zero-load latency cut, seed 003 delay model, router delay = wire delay:")
    print("   pattern          size   mesh hops  diag hops   hop cut  latency cut")
    for r in ws.noc.patent_table():
        print(f"   {r['pattern']:<15} {r['n']:>2}x{r['n']:<2}  {r['mesh_hops']:9.3f}  {r['diag_hops']:9.3f}"
              f"  {100 * r['hop_cut']:7.1f}%  {100 * r['latency_cut']:10.1f}%")
    print("   patent: about 20% on average (uniform), about 40% for diagonal traffic")

    print(f"\n3. Measured on the cycle-level fabric ({n}x{n}, single packets, cycles):")
    for pattern in ("uniform", "transpose"):
        mesh = ws.noc.measure_zero_load(pattern, n, n, "mesh").mean_latency
        for hop in (1, 2):
            diag = ws.noc.measure_zero_load(pattern, n, n, "mesh+diag", diag_hop_cycles=hop).mean_latency
            print(f"   {pattern:<10} mesh {mesh:6.2f}  mesh+diag (diagonal hop {hop} cycle{'s' * (hop > 1)}) "
                  f"{diag:6.2f}  cut {100 * (1 - diag / mesh):5.1f}%")

    print(f"\n4. Under load ({n}x{n}, packet mode; our extension):")
    curves = []
    for pattern in ("uniform", "transpose"):
        for topo in ("mesh", "mesh+diag"):
            curve = ws.noc.load_sweep(pattern, n, n, topo, rates=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
                                      window=args.window)
            curves.append(curve)
            lat = ", ".join("sat" if v != v else f"{v:.1f}" for v in curve.latency)
            print(f"   {pattern:<10} {topo:<10} saturation {curve.saturation_throughput:.3f} "
                  f"packets/node/cycle; mean latency at 0.05..0.5: {lat}")
    if args.plot:
        from matplotlib.figure import Figure

        import wafersim.viz as viz
        fig = Figure(figsize=(10, 4), layout="constrained")
        left, right = fig.subplots(1, 2)
        viz.latency_vs_load(curves[:2], ax=left, title="uniform")
        viz.latency_vs_load(curves[2:], ax=right, title="transpose")
        fig.savefig(args.plot, dpi=120)
        print(f"\nwrote {args.plot}")


if __name__ == "__main__":
    main()
