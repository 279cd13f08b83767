"""Which BLAS the torch in this process calls: Debian's torch calls
whatever libblas.so.3 the alternatives system points at, the reference
BLAS (about 20x slower on matrix products) unless libopenblas0-pthread is
installed. The figures a cross-check prints say which one they ran on."""
import os


def blas_in_use():
    """The BLAS and LAPACK libraries mapped into this process (import torch
    and run a matrix product first), as one line."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5].startswith("/"):
                name = os.path.basename(parts[5])
                if "blas" in name or "lapack" in name:
                    found.add(os.path.realpath(parts[5]))
    return ", ".join(sorted(found)) or "none mapped"
