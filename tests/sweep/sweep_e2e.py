#!/usr/bin/env python3
"""`kernlens sweep` end to end: a 6-point sweep (2 models zipped with their fake-ncu data x 3
batch sizes) of a tiny CPU-only workload under the fake ncu, one point failing until the test
removes a file: submit, status, resubmit (only the failed point), ingest twice (idempotent),
the cross-model views and `report --db`.

  sweep_e2e.py --kernlens BIN --fixtures DIR --mode slurm   a one-node Slurm cluster (munged,
               slurmctld, slurmd on localhost, config written here), stopped at the end
               whatever happens; exit 77 (skipped) when the daemons cannot start here
  sweep_e2e.py ... --mode local                            the same with `submit --local`
"""
import argparse, ctypes, json, os, shutil, signal, socket, sqlite3, subprocess, sys, tempfile, time

SKIP = 77
POINTS = ["llama-b1", "qwen-b1", "llama-b2", "qwen-b2", "llama-b4", "qwen-b4"]
FAILING = "qwen-b2"  # index 3


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def run(argv, env=None, expect=0):
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    if expect is not None and r.returncode != expect:
        fail(f"{' '.join(argv)}: exit {r.returncode}, expected {expect}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


def write_spec(work, fixtures, fake_ncu):
    spec = os.path.join(work, "sweep.toml")
    with open(spec, "w") as f:
        f.write(f'''# written by tests/sweep/sweep_e2e.py
name = "tiny"
run_root = "runs"
command = ["sh", "{fixtures}/sweep/workload.sh", "fail-{{model}}-b{{batch}}", "--model", "{{model}}", "--batch", "{{batch}}"]
profile = ["--discovery", "ncu", "--ncu", "{fake_ncu}", "--tier", "quick", "--quiet"]
point_name = "{{model}}-b{{batch}}"

[matrix]
batch = [1, 2, 4]

[[zip]]
model = ["llama", "qwen"]
data = ["llama_prefill", "qwen_decode"]   # the real exports the fake ncu serves for each model

[tags]
tokens = "128"

[env]
FAKE_NCU_DATA = "{{data}}"

[slurm]
max_parallel = 2
time = "00:05:00"
''')
    return spec


# ---- a one-node Slurm cluster -------------------------------------------------------------

def die_with_parent():
    """Runs in each daemon's child before exec: SIGKILL when the test dies, however it dies."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")


class Cluster:
    def __init__(self):
        # Under /tmp whatever TMPDIR says: munged's socket path must stay short (sun_path).
        self.dir = tempfile.mkdtemp(prefix="kl-slurm-", dir="/tmp")
        os.chmod(self.dir, 0o755)  # munged wants every directory above its socket searchable
        self.procs = []
        self.conf = os.path.join(self.dir, "slurm.conf")

    def skip_reason(self):
        if os.geteuid() != 0:
            return "slurmd must run as root to start jobs, and this test runs as a user"
        missing = [n for n in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel") if not find(n)]
        if missing:
            return f"{', '.join(missing)} not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
        return None

    def start_daemon(self, argv, log):
        out = open(os.path.join(self.dir, log), "w")
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=die_with_parent))

    def start(self):
        d = self.dir
        for sub in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(d, sub), mode=0o700)
        os.chmod(os.path.join(d, "munge"), 0o755)
        key = os.path.join(d, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = os.path.join(d, "munge", "sock")
        self.start_daemon([find("munged"), "--foreground", "--force", f"--socket={sock}", f"--key-file={key}",
                           f"--pid-file={d}/munge/pid", f"--log-file={d}/munge/log", f"--seed-file={d}/munge/seed"],
                          "munged.out")
        cpus = min(2, os.cpu_count() or 1)
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=kltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=2
NodeName=kl1 NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes=kl1 Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.wait_for(lambda: os.path.exists(sock), 10)
        self.start_daemon([find("slurmctld"), "-D", "-i", "-f", self.conf], "slurmctld.out")
        self.start_daemon([find("slurmd"), "-D", "-N", "kl1", "-f", self.conf], "slurmd.out")
        sinfo = [find("sinfo"), "--noheader", "--format=%T"]
        return self.wait_for(lambda: subprocess.run(sinfo, env=self.env, capture_output=True, text=True)
                             .stdout.strip() == "idle", 30)

    def wait_for(self, ready, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if any(p.poll() is not None for p in self.procs):
                return False
            if ready():
                return True
            time.sleep(0.2)
        return False

    def logs(self):
        text = ""
        for name in ("munged.out", "slurmctld.out", "slurmd.out", "log/slurmctld.log", "log/slurmd.log"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                text += f"--- {name} (last lines)\n" + "".join(open(path).readlines()[-15:])
        return text

    def stop(self):
        if len(self.procs) == 3 and self.procs[1].poll() is None:  # end this cluster's jobs (it has no others)
            subprocess.run([find("scancel"), "--quiet", "--full", f"--user={os.getuid()}"], env=self.env,
                           capture_output=True, timeout=10)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- the sweep ----------------------------------------------------------------------------

class Sweep:
    def __init__(self, kernlens, spec, env, mode):
        self.k, self.spec, self.env, self.mode = kernlens, spec, env, mode

    def cmd(self, *args, expect=0):
        return run([self.k, "sweep", *args], env=self.env, expect=expect)

    def status(self):
        return json.loads(self.cmd("status", self.spec, "--format", "json").stdout)

    def submit(self, expect_failed):
        if self.mode == "local":
            return self.cmd("submit", self.spec, "--local", expect=3 if expect_failed else 0)
        r = self.cmd("submit", self.spec)
        check(r.stdout.startswith("sweep tiny: submitted job "), f"submit said: {r.stdout}")
        return r

    def wait(self):
        end = time.time() + 90
        while time.time() < end:
            s = self.status()
            if s["counts"]["queued"] == 0 and s["counts"]["running"] == 0:
                return s
            time.sleep(0.5)
        fail(f"the sweep did not finish in 90 s: {json.dumps(self.status(), indent=1)}")


def by_id(status):
    return {p["id"]: p for p in status["points"]}


def check_views(k, db, env):
    """The cross-model views answer per op class and family for both models and all batches."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT model, batch, tokens, op_class, runs, share_of_time, sol_pct, measured_share "
                       "FROM v_op_class_scaling").fetchall()
    check({(m, b) for m, b, *_ in rows} == {(m, b) for m in ("llama", "qwen") for b in (1, 2, 4)},
          f"v_op_class_scaling lacks a point: {sorted({(m, b) for m, b, *_ in rows})}")
    check(all(t == 128 and n == 1 for _, _, t, _, n, *_ in rows), "tokens or runs per point wrong")
    for m in ("llama", "qwen"):
        for b in (1, 2, 4):
            total = sum(r[5] for r in rows if r[0] == m and r[1] == b)
            check(abs(total - 1) < 1e-9, f"{m} b{b}: the op classes' shares sum to {total}, not 1")
    gemm = [r for r in rows if r[3] == "gemm"]
    check(len(gemm) == 6 and all(0 < r[6] <= 100 for r in gemm), f"gemm SOL missing or out of range: {gemm}")
    families = con.execute("SELECT COUNT(DISTINCT base_name), COUNT(DISTINCT model) FROM v_family_scaling").fetchone()
    check(families[0] > 5 and families[1] == 2, f"v_family_scaling: {families}")
    tags = con.execute("SELECT value FROM run_tags WHERE key = 'sweep_point' ORDER BY value").fetchall()
    check(sorted(t for (t,) in tags) == sorted(POINTS), f"sweep_point tags: {tags}")
    view = run([k, "db", "query", "--db", db, "--view", "class-scaling", "--format", "json"], env=env)
    check(len(json.loads(view.stdout)) == len(rows), "db query --view class-scaling disagrees with the view")
    html = os.path.join(os.path.dirname(db), "across.html")
    run([k, "report", "--db", db, "-o", html], env=env)
    page = open(html).read()
    check('id="scaling-sol"' in page and 'id="scaling-share"' in page and "<table" in page,
          "report --db: the small multiples or the table are missing")


def exercise(sweep, work, db):
    plan = json.loads(sweep.cmd("plan", sweep.spec, "--format", "json").stdout)
    check([p["id"] for p in plan["points"]] == POINTS, f"plan: {[p['id'] for p in plan['points']]}")
    check(sweep.status()["counts"]["not started"] == 6, "before any submission every point is not started")

    sweep.submit(expect_failed=True)
    s = sweep.wait()
    points = by_id(s)
    check(s["counts"]["done"] == 5 and s["counts"]["failed"] == 1, f"after the first round: {s['counts']}")
    check(points[FAILING]["state"] == "failed" and "exit code 1" in points[FAILING]["detail"],
          f"the failing point's reason: {points[FAILING]}")
    if sweep.mode == "slurm":
        check(all(p["task"].endswith(f"_{p['index']}") for p in s["points"]), f"array task ids: {s['points']}")

    os.remove(os.path.join(work, f"fail-{FAILING}"))
    r = sweep.submit(expect_failed=False)
    if sweep.mode == "slurm":
        check("--array=3%2" in r.stdout, f"the resubmission is not only point 3: {r.stdout}")
        script = r.stdout.strip().split("script ")[-1]
        text = open(script).read()
        check("#SBATCH --array=3%2" in text and "qwen-b2" in text and "llama-b1" not in text,
              f"the resubmitted script:\n{text}")
    else:
        check("ran 1 point here: 1 done" in r.stdout, f"the local resubmission: {r.stdout}")
    s = sweep.wait()
    check(s["counts"]["done"] == 6, f"after the resubmission: {s['counts']}")
    check(os.path.isdir(os.path.join(work, "runs", FAILING, "failed-1")), "the failed attempt was not kept")
    again = sweep.cmd("submit", sweep.spec) if sweep.mode == "slurm" else sweep.cmd("submit", sweep.spec, "--local")
    check("nothing to submit" in again.stdout, f"a third submit: {again.stdout}")

    first = sweep.cmd("ingest", sweep.spec, "--db", db)
    check("6 added, 0 already there" in first.stdout, f"first ingest: {first.stdout}")
    second = sweep.cmd("ingest", sweep.spec, "--db", db)
    check("0 added, 6 already there" in second.stdout, f"second ingest: {second.stdout}")
    check_views(sweep.k, db, sweep.env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernlens", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--mode", choices=["slurm", "local"], required=True)
    a = ap.parse_args()
    kernlens = os.path.abspath(a.kernlens)
    fixtures = os.path.abspath(a.fixtures)
    work = tempfile.mkdtemp(prefix="kl-sweep-")
    cluster = None
    try:
        spec = write_spec(work, fixtures, os.path.join(fixtures, "fake_tools", "bin", "ncu"))
        open(os.path.join(work, f"fail-{FAILING}"), "w").close()
        env = dict(os.environ)
        if a.mode == "slurm":
            cluster = Cluster()
            reason = cluster.skip_reason()
            if reason:
                print(f"SKIPPED: {reason}")
                return SKIP
            if not cluster.start():
                print(f"SKIPPED: the Slurm daemons did not start here\n{cluster.logs()}")
                return SKIP
            env = cluster.env
        started = time.time()
        exercise(Sweep(kernlens, spec, env, a.mode), work, os.path.join(work, "sweep.db"))
        print(f"ok: {a.mode} sweep of 6 points, resubmission, ingest and views in {time.time() - started:.1f} s")
        return 0
    except SystemExit:
        if cluster:
            print(cluster.logs(), file=sys.stderr)
        raise
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
