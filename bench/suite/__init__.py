# SPDX-License-Identifier: MIT
"""switchyard's benchmark suite: bench/sybench.py is its entry."""
