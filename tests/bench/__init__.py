"""The benchmarks (bench/, `lagmem bench`): loaders, protocol, oracle, load test, probes."""
