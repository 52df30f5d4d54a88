"""Scratch probe: load every UniSim scene in MuJoCo and MotrixSim, compare name orders, step."""
import sys, numpy as np, mujoco, motrixsim as ms
C = "conformance/unisim_conformance/scenes/"
SCENES = [C + s + ".xml" for s in ["pendulum", "double_pendulum", "free_body", "box_on_plane",
          "fixed_arm", "hfield_terrain"]] + ["unisim_core/scenes/quadruped.xml",
          "unisim_core/scenes/quadruped_hfield.xml"]

def mj_names(m):
    f = lambda obj, n, skip=0: [mujoco.mj_id2name(m, obj, i) for i in range(skip, n)]
    hinge = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(m.njnt)
             if m.jnt_type[i] != mujoco.mjtJoint.mjJNT_FREE]
    free = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(m.njnt)
            if m.jnt_type[i] == mujoco.mjtJoint.mjJNT_FREE]
    return dict(bodies=f(mujoco.mjtObj.mjOBJ_BODY, m.nbody, 1), joints=hinge, free=free,
                actuators=f(mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu), sensors=f(mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor),
                sites=f(mujoco.mjtObj.mjOBJ_SITE, m.nsite), geoms=f(mujoco.mjtObj.mjOBJ_GEOM, m.ngeom),
                keys=f(mujoco.mjtObj.mjOBJ_KEY, m.nkey))

def mx_names(M):
    return dict(bodies=list(M.link_names), joints=list(M.joint_names),
                free=[fb.name for fb in M.floating_bases], actuators=list(M.actuator_names),
                sensors=[s.name for s in M.low.low_site_sensors] + [s.name for s in M.low.low_joint_sensors],
                sites=list(M.site_names), geoms=list(M.geom_names), keys=[k.name for k in M.keyframes])

ok = True
for p in SCENES:
    m = mujoco.MjModel.from_xml_path(p); d = mujoco.MjData(m)
    M = ms.load_model(p); D = ms.SceneData(M)
    a, b = mj_names(m), mx_names(M)
    print(f"== {p}  mj nq/nv/nu={m.nq}/{m.nv}/{m.nu}  mx dof_pos/dof_vel/act={M.num_dof_pos}/{M.num_dof_vel}/{M.num_actuators}")
    for k in a:
        same = a[k] == b[k]
        setsame = sorted(a[k]) == sorted(b[k])
        tag = "SAME" if same else ("SAME-SET, ORDER DIFFERS" if setsame else "DIFFERENT")
        if k != "sensors" and not same: ok = False
        if k == "sensors" and not setsame: ok = False
        print(f"  {k:9s} {tag}")
        if not same:
            print(f"     mujoco   : {a[k]}\n     motrixsim: {b[k]}")
    mass_mj = m.body_mass[1:]; mass_mx = np.array([l.mass for l in M.links])
    print("  masses equal:", np.allclose(mass_mj, mass_mx, atol=1e-6))
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0); M.keyframes[0].apply(D)
    mujoco.mj_forward(m, d); M.forward_kinematic(D)
    for _ in range(1000): mujoco.mj_step(m, d)
    M.step_n(D, 1000)
    fin = np.isfinite(d.qpos).all() and np.isfinite(np.asarray(D.dof_pos)).all()
    ok &= bool(fin)
    print(f"  1000 steps finite: {fin}; mj t={d.time:.3f}")
print("ALL OK" if ok else "PROBLEMS")
