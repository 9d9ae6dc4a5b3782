"""Running untrusted env code: the OS sandbox (bubblewrap + seccomp), its fork server and workers, the pool.

Sits above `catalog` and `constraints` and below everything that executes envs; a worker imports
only `catalog`, `constraints` and this package (what `sandbox.isolation` mounts).
"""
