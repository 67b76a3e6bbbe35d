"""Buffer balancing (seed 004) on a small section cut, with the stage-level pipeline model.

A residual block and an attention-like block read from one load. Their skip paths are
shallower than the paths through the stages, so the joins stall the pipeline. The pass
balances the total depths with the fewest memory blocks; the pipeline model shows the
interval before and after. Then FIG. 12's order problem: the greedy pairwise pass leaves
a join unbalanced, the solver does not.

Run: python examples/balance_pipeline.py [--batches 40] [--block-bytes 4096]
"""

import argparse

import wafersim as ws

SECTION_CUT = """
    load   input
    stage  conv1 latency=2
    stage  conv2
    stage  q
    stage  k1
    stage  k2
    stage  v
    buffer x     input -> conv1,add depth=1 bytes=2048    # fan-out: the residual skip
    buffer h1    conv1 -> conv2 depth=2 bytes=2048
    buffer h2    conv2 -> add depth=1 bytes=2048
    buffer r     add -> q,k1,v,attn depth=1 bytes=1024    # Q, K, V and the residual
    buffer qo    q -> attn depth=1 bytes=1024
    buffer ko    k1 -> k2 depth=1 bytes=1024
    buffer ko2   k2 -> attn depth=1 bytes=1024
    buffer vo    v -> attn depth=1 bytes=1024
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--block-bytes", type=int, default=4096,
                    help="bytes of PE memory per block (the seed's PMU)")
    args = ap.parse_args()
    b = ws.balance

    g = b.from_text(SECTION_CUT)
    before = b.simulate(g, batches=args.batches)
    print(f"section cut: {len(g.nodes)} nodes, joins {g.joins}, unbalanced {b.unbalanced_joins(g)}")
    print(f"before: interval {before.interval:.2f} steps/batch (predicted "
          f"{b.steady_interval(g):.2f}), stalls {({k: v for k, v in before.stalls.items() if v})}")

    for mode in ("equal", "capacity"):
        res = b.balance(g, mode=mode, block_bytes=args.block_bytes)
        after = b.simulate(res.graph, batches=args.batches)
        print(f"\n{res.summary()}")
        print(f"after:  interval {after.interval:.2f} steps/batch, last batch out at step "
              f"{after.completion[-1]} (was {before.completion[-1]})")

    print("\nFIG. 12: buffers of depth 5, 3 (shared by both joins) and 4")
    fig12 = b.examples.fig12()
    greedy = b.greedy(fig12, order=["J2", "J1"])
    best = b.balance(fig12)
    print(f"  greedy (J2 first): depths {greedy.depths}, unbalanced {greedy.unbalanced}, "
          f"+{greedy.blocks_added} blocks")
    print(f"  solver: every join balanced ({b.unbalanced_joins(best.graph) == []}), "
          f"+{best.blocks_added} blocks")


if __name__ == "__main__":
    main()
