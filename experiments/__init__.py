"""The command line, the experiment harness (grids, SQLite store, resume, Dask) and the
reports: the last stage, which may import from every other. (The benchmarks live beside
the package, in the checkout's benchmarks/.)"""
