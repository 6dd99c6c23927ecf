"""tools/device_check_jax.py — the jax.jit side of tools/device_check.sh: the same 3-layer MLP
forward and 10-op elementwise chain as bench/device_vs_jax.cpp, same sizes and dtypes, timed
as the median of N calls each followed by block_until_ready(). Prints `time_ms <case> <ms>`."""
import sys
import time

import jax
import jax.numpy as jnp

REPS = 20  # main() reads argv[1]; bench/xla_vs_jax.py imports chain and mlp from here


def chain(x):  # 10 ops, as chain_fused in bench/workloads.hpp
    return jnp.tanh(jnp.exp(-jnp.abs(x * 0.5 + 0.25)) * 2.0 - 1.0) * 0.75 + jax.nn.sigmoid(x)


def mlp(x, w1, b1, w2, b2, w3, b3):
    h1 = jax.nn.relu(x @ w1 + b1)
    h2 = jax.nn.relu(h1 @ w2 + b2)
    return h2 @ w3 + b3


def median_ms(f, *args):
    f(*args).block_until_ready()  # compile + warm up
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        f(*args).block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    global REPS
    REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    key = jax.random.PRNGKey(0)
    ks = jax.random.split(key, 8)
    x = jax.random.normal(ks[0], (1 << 22,), jnp.float32)
    xb = jax.random.normal(ks[1], (256, 512), jnp.float32)
    w = [jax.random.normal(ks[2], (512, 512), jnp.float32), jax.random.normal(ks[3], (512,), jnp.float32),
         jax.random.normal(ks[4], (512, 512), jnp.float32), jax.random.normal(ks[5], (512,), jnp.float32),
         jax.random.normal(ks[6], (512, 10), jnp.float32), jax.random.normal(ks[7], (10,), jnp.float32)]
    # torchtpu's default matmul precision is DEFAULT too; keep jax at its default.
    print(f"time_ms chain {median_ms(jax.jit(chain), x):.4f}")
    print(f"time_ms mlp {median_ms(jax.jit(mlp), xb, *w):.4f}")


if __name__ == "__main__":
    main()
