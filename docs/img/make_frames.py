"""Regenerate docs/img/frames.png: python docs/img/make_frames.py"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def arrow(ax, x, y, dx, dy, color, label, lw=2.2, off=(0.06, 0.06)):
    ax.annotate("", xy=(x + dx, y + dy), xytext=(x, y),
                arrowprops=dict(arrowstyle="-|>", color=color, lw=lw, mutation_scale=16))
    ax.text(x + dx + off[0], y + dy + off[1], label, color=color, fontsize=10, ha="center", va="center")


fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4.4))
for ax in (a, b):
    ax.set_aspect("equal")
    ax.set_xlim(-0.4, 2.6)
    ax.set_ylim(-1.1, 1.9)
    ax.axis("off")

# left: world frame and a base frame yawed by +90 degrees (top view, z out of the page)
arrow(a, 0, 0, 0.9, 0, "tab:red", "$x_w$")
arrow(a, 0, 0, 0, 0.9, "tab:green", "$y_w$")
a.plot(0, 0, "o", color="k", ms=5)
a.text(-0.08, -0.12, "world  ($z_w$ out of page)", fontsize=9, va="top")
bx, by = 1.6, 0.7
a.add_patch(plt.Rectangle((bx - 0.2, by - 0.45), 0.4, 0.9, fc="0.9", ec="0.5"))  # body, long axis along y_w
arrow(a, bx, by, 0, 0.75, "tab:red", "$x_b$", off=(0.12, 0.0))
arrow(a, bx, by, -0.75, 0, "tab:green", "$y_b$", off=(0.0, 0.1))
a.plot(bx, by, "o", color="k", ms=5)
a.text(bx - 0.35, by - 0.6, "base: pos (1.6, 0.7, z)\nquat wxyz = (0.707, 0, 0, 0.707)\n= 90° yaw about $z_w$",
       fontsize=9, va="top")
a.set_title("World frame and a base frame with a 90° yaw", fontsize=11)

# right: a roll spin of the yawed base, in body and world coordinates
arrow(b, 0, 0, 0.9, 0, "tab:red", "$x_w$")
arrow(b, 0, 0, 0, 0.9, "tab:green", "$y_w$")
b.plot(0, 0, "o", color="k", ms=5)
b.add_patch(plt.Rectangle((bx - 0.2, by - 0.45), 0.4, 0.9, fc="0.9", ec="0.5"))
arrow(b, bx, by, 0, 0.95, "tab:purple", "$\\omega$ (along $x_b$)", lw=3, off=(0.0, 0.1))
b.text(-0.3, -0.12,
       "the base spins about its own $x_b$ at 1 rad/s:\n"
       "  qvel[3:6] (body frame)        = (1, 0, 0)\n"
       "  get_body_ang_vel_b(base)      = (1, 0, 0)\n"
       "  get_base_ang_vel() (world)    = (0, 1, 0)\n"
       "  get_body_ang_vel_w(base)      = (0, 1, 0)",
       fontsize=9, va="top", family="monospace")
b.set_title("Angular velocity: body frame vs world frame", fontsize=11)
fig.tight_layout()
fig.savefig(Path(__file__).with_name("frames.png"), dpi=90, bbox_inches="tight")
