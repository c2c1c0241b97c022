"""twbn's benchmarks: each script measures one claim side by side with its peer and writes
the current table to benchmarks/results/ (the command that regenerates it is named in
the table). Run from the checkout's root, e.g. ``python -m benchmarks.bench_field --anchors
DIR``; they are not part of the installed package."""
