"""Scratch probe: PD hold at 'home' keyframe for 2 s in both engines; print base height summary."""
import sys, numpy as np, mujoco, motrixsim as ms
for p in ["unisim_core/scenes/quadruped.xml", "unisim_core/scenes/quadruped_hfield.xml"]:
  for dt in [0.002, 0.005]:
    m = mujoco.MjModel.from_xml_path(p); m.opt.timestep = dt; d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    M = ms.load_model(p); M.options.timestep = dt; D = ms.SceneData(M)
    k = M.keyframes[0]; k.apply(D); M.forward_kinematic(D)
    ctrl_after_apply = np.asarray(D.actuator_ctrls).copy()
    D.actuator_ctrls = k.ctrl  # explicit
    n = int(round(2.0 / dt)); every = int(round(0.1 / dt))
    hz_mj, hz_mx, xy_mj, xy_mx = [], [], [], []
    for i in range(n):
        mujoco.mj_step(m, d); M.step(D)
        if (i + 1) % every == 0:
            q = np.asarray(D.dof_pos)
            hz_mj.append(d.qpos[2]); hz_mx.append(q[2])
    q = np.asarray(D.dof_pos)
    tilt_mj = 2*np.degrees(np.arccos(min(1, abs(d.qpos[3])))); tilt_mx = 2*np.degrees(np.arccos(min(1, abs(q[6]))))
    print(f"== {p.split('/')[-1]} dt={dt} (MotrixSim keyframe.apply set ctrl: {np.allclose(ctrl_after_apply, k.ctrl)})")
    for name, h, qq, tilt in [("mujoco", hz_mj, d.qpos, tilt_mj), ("motrix", hz_mx, q, tilt_mx)]:
        h = np.array(h)
        print(f"  {name}: z0=0.2848 z(0.1s)={h[0]:.4f} min={h.min():.4f} max={h.max():.4f} z(2s)={h[-1]:.4f} "
              f"xy(2s)=({qq[0]:+.4f},{qq[1]:+.4f}) tilt={tilt:.2f}deg finite={np.isfinite(qq).all()}")
    print("  joint err mj", np.abs(d.qpos[7:] - m.key_qpos[0][7:]).max().round(4),
          " mx", np.abs(q[7:] - k.dof_pos[7:]).max().round(4))
    s = {n: M.get_sensor_value(n, D) for n in ["imu_acc", "imu_quat", "imu_pos"]}
    print("  sensors mj acc", d.sensordata[3:6].round(3), "quat(wxyz)", d.sensordata[6:10].round(4))
    print("  sensors mx acc", np.round(s["imu_acc"], 3), "quat(xyzw)", np.round(s["imu_quat"], 4), "pos", np.round(s["imu_pos"], 4))
