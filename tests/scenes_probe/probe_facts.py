import numpy as np, mujoco, motrixsim as ms
C = "conformance/unisim_conformance/scenes/"
def both(p):
    m = mujoco.MjModel.from_xml_path(p); d = mujoco.MjData(m); M = ms.load_model(p); D = ms.SceneData(M)
    return m, d, M, D
# pendulum period (small angle 0.05 rad): time of zero crossings
m, d, M, D = both(C + "pendulum.xml")
d.qpos[0] = 0.05; D.set_dof_pos(np.array([0.05]), M); mujoco.mj_forward(m, d); M.forward_kinematic(D)
print("pendulum bob site at q=0.05: mj", d.site_xpos[0].round(5), "mx", np.round(M.get_site('bob').get_position(D), 5), "closed", (-np.sin(.05), 0, -np.cos(.05)))
qa, qb = [], []
for i in range(5000):
    mujoco.mj_step(m, d); M.step(D); qa.append(d.qpos[0]); qb.append(float(np.asarray(D.dof_pos)[0]))
def period(q):
    q = np.array(q); z = np.where((q[:-1] > 0) & (q[1:] <= 0))[0]; return np.diff(z).mean() * 0.001
print("pendulum period mj %.4f mx %.4f closed(small angle) %.4f" % (period(qa), period(qb), 2*np.pi*np.sqrt(1/9.81)))
print("  jointpos sensor mj", d.sensordata, "mx", M.get_sensor_value("hinge_pos", D))
# free body: fall 0.5 s, and velocity convention
m, d, M, D = both(C + "free_body.xml")
for i in range(250): mujoco.mj_step(m, d)
M.step_n(D, 250)
print("free fall t=0.5: mj z %.5f mx z %.5f closed %.5f" % (d.qpos[2], np.asarray(D.dof_pos)[2], 1 - .5*9.81*.25))
print("  mx dof_pos", np.round(D.dof_pos, 4), "(xyzw quat)")
# angular velocity convention: rotate body 90deg about z, then set dof_vel ang = (1,0,0)
M2 = ms.load_model(C + "free_body.xml"); D2 = ms.SceneData(M2)
q = np.array([0, 0, 1, 0, 0, np.sin(np.pi/4), np.cos(np.pi/4)]); D2.set_dof_pos(q, M2); D2.set_dof_vel(np.array([0, 0, 0, 1., 0, 0])); M2.forward_kinematic(D2)
fb = M2.floating_bases[0]
print("  mx dof_vel ang=(1,0,0) with body yawed 90deg -> global w", np.round(fb.get_global_angular_velocity(D2), 4), "local w", np.round(fb.get_local_angular_velocity(D2), 4))
m3 = mujoco.MjModel.from_xml_path(C + "free_body.xml"); d3 = mujoco.MjData(m3)
d3.qpos[:] = [0, 0, 1, np.cos(np.pi/4), 0, 0, np.sin(np.pi/4)]; d3.qvel[:] = [0, 0, 0, 1, 0, 0]; mujoco.mj_forward(m3, d3)
v = np.zeros(6); mujoco.mj_objectVelocity(m3, d3, mujoco.mjtObj.mjOBJ_BODY, 1, v, 0)
print("  mj qvel ang=(1,0,0) same pose -> global w", v[:3].round(4))
# box on plane: rest height, push below/above threshold
for F in [4.5, 5.3]:
    m, d, M, D = both(C + "box_on_plane.xml")
    link = M.get_link("box")
    for i in range(500):
        d.xfrc_applied[1, 0] = F; mujoco.mj_step(m, d)
        link.add_external_force(D, np.array([F, 0, 0])) if False else None
    # motrix external force API
    for i in range(500):
        try: link.add_external_force(D, np.array([F, 0., 0.]), local=False)
        except TypeError as e: print(e); break
        M.step(D)
    print(f"box F={F} (threshold 4.905) 1 s: mj x={d.qpos[0]:.4f} z={d.qpos[2]:.4f}  mx x={np.asarray(D.dof_pos)[0]:.4f} z={np.asarray(D.dof_pos)[2]:.4f}  closed x={max(0,(F/1-4.905)*0.5):.4f}")
# fixed arm FK
m, d, M, D = both(C + "fixed_arm.xml")
q = np.array([0, 0.3, -0.5, 0.4]); d.qpos[:] = q; D.set_dof_pos(q, M); mujoco.mj_forward(m, d); M.forward_kinematic(D)
a, b, c = .3, -.2, .2
print("arm ee mj", d.site_xpos[0].round(5), "mx", np.round(M.get_site("ee").get_position(D), 5), "closed", np.round([.4*np.sin(a)+.3*np.sin(b)+.1*np.sin(c), 0, .1+.4*np.cos(a)+.3*np.cos(b)+.1*np.cos(c)], 5))
J = M.get_site("ee").get_jacobian(D); jp = np.zeros((3, 4)); jr = np.zeros((3, 4)); mujoco.mj_jacSite(m, d, jp, jr, 0)
print("  jac (mx rows 3:6 = linear) max|diff| lin", np.abs(np.asarray(J)[3:] - jp).max().round(6), "ang", np.abs(np.asarray(J)[:3] - jr).max().round(6))
# hfield ball rest
m, d, M, D = both(C + "hfield_terrain.xml")
for i in range(1500): mujoco.mj_step(m, d)
M.step_n(D, 1500)
print("hfield ball rest z (closed 0.5): mj %.4f mx %.4f" % (d.qpos[2], np.asarray(D.dof_pos)[2]))
# does add_external_force persist across steps?
M = ms.load_model(C + "free_body.xml"); D = ms.SceneData(M); M.options.disable_gravity = True if hasattr(M.options, 'disable_gravity') else None
M.get_link("box").add_external_force(D, np.array([2., 0, 0]), local=False)
M.step_n(D, 500)
print("mx force 2N applied once then 500 steps (1 s), m=2: vx =", np.round(np.asarray(D.dof_vel)[0], 4), "(0.002 if cleared after 1 step, 1.0 if persistent)")
