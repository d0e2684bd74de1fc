"""dnnresolve: which CUDA / cuDNN / driver a deep-learning framework needs, and what to do about it."""

__version__ = "0.1.0"
