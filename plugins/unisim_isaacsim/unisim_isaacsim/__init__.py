"""Isaac Sim / Isaac Lab backend for UniSim: SDK-free host side and worker-side helpers."""
