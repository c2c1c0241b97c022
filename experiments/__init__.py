"""The command line, the experiment harness (grids, SQLite store, resume, Dask), reports and
benchmarks: the last stage, which may import from every other."""
