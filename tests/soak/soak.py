#!/usr/bin/env python3
"""A compressed month of faults: the demo partition running (readout included), a standby Control
Server, an IS mirror, IS subscribers and two GUIs offscreen; every few seconds one random process
gets SIGKILL (and is restarted with its own command line, as a supervisor would), or SIGSTOP then
SIGCONT, or its cable pulled: RO2, FE4 and the mirror run on a second host (a network namespace of
the soak's own, joined to this one by a veth pair), whose link goes down for --stop-s seconds. The
network faults "split" and "flap" put the standby Control Server on the second host as well: a split
cuts it off from the primary for 2.5-4 x --stop-s (it takes over for the second host while the primary
serves the first), a flap pulls the cable five times, mostly for less than a takeover takes, now and
then for longer; after each, one Control Server must serve every process again.
Invariants are checked as it goes and at the end; every one is reported, and the exit status is 1
if one failed.

  tests/soak/soak.py --bin build/bin --minutes 60 [--faults kill,stop,cable] [--roles slave,isserver,...]

Invariants:
  recovery   after every fault the run is back in Running (master and every slave) by itself,
             within --recovery-s
  writes     every IS write the soak made and that was acknowledged is present, with its value,
             after all restarts (checked after each IS server restart and at the end)
  subscribers  the IS subscribers (`dialogctl is watch` on RunParams and on the mirror) end with
             every object's last value
  resources  no process grows in resident memory or descriptors beyond a stated bound
             (RSS <= 2 x start + 64 MiB, descriptors <= start + 64), start = first sample after
             the warm-up, per process name across restarts
  crashes    no process exits other than those the soak killed
  servers    after every split or flap, one Control Server serves (the other is its standby), within
             --recovery-s

Without cable faults only loopback is used. With them (root, `ip netns add` works) every process
uses the soak's own veth pair instead, 10.215.X.Y/30 (X.Y from the soak's PID): the Control Servers
listen on its end in this namespace, and each process advertises the address of its route to them.
The namespace ("dsoak<PID>") and its veth pair are removed at the end, also on ^C or an error, and
those of an earlier soak that was killed (its PID gone) at the next start.
Everything is written under --run-dir (default: a new directory in $TMPDIR).
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLAVES = [("FE1", "control", ["--registers", "32"]), ("FE2", "control", ["--registers", "32"]),
          ("FE3", "control", ["--registers", "64"]), ("FE4", "control", ["--registers", "64"]),
          ("RO1", "readout", ["--threads", "4", "--rate", "20000", "--spill-s", "5", "--off-s", "2"]),
          ("RO2", "readout", ["--threads", "4", "--rate", "20000", "--spill-s", "5", "--off-s", "2"])]
ROLES = ["slave", "isserver", "master", "controlserver", "standby", "mirror"]
KINDS = ["kill", "stop", "cable", "split", "flap"]
NETWORK_KINDS = ("cable", "split", "flap")  # those that need the second host
SECOND_HOST = ["RO2", "FE4", "Mirror"]  # the processes whose cable a cable fault pulls
BLACKHOLE_METRIC = "4215"  # of the soak's route that holds what is sent to the host while its cable is out
WRITE_OBJECTS = 8
SUBSCRIBERS_SETTLE_S = 20  # how long a subscriber may take to catch up after the last fault


def free_port(address="127.0.0.1"):
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, flush=True)


class Host:
    """The second host of the cable faults: a network namespace of this soak's own, joined to this
    one by a veth pair with a /30 of 10.215.0.0/16 (the multihost tests use 10.213 and 10.214)."""

    PATTERN = re.compile(r"^dsoak(\d+)$")

    def __init__(self, pull="switch"):
        self.pull = pull
        pid = os.getpid()
        self.ns = f"dsoak{pid}"
        self.outer, self.inner = self.ns + "r", self.ns + "n"  # this namespace's end, the host's end
        i = pid % 16384
        net = f"10.215.{i // 64}.{(i % 64) * 4}"
        self.subnet = net + "/30"
        self.address = f"10.215.{i // 64}.{(i % 64) * 4 + 1}"  # this side: the Control Servers
        self.peer = f"10.215.{i // 64}.{(i % 64) * 4 + 2}"  # the second host
        self.made = False
        self.down = False

    @staticmethod
    def ip(*args):
        """Runs `ip ARGS`; "" on success, else the reason."""
        try:
            r = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"ip {' '.join(args)}: {e}"
        return "" if r.returncode == 0 else f"ip {' '.join(args)}: {r.stderr.strip()}"

    def set_up(self):
        """Makes the namespace and the cable; "" on success, else why not."""
        if os.geteuid() != 0:
            return "not root: network namespaces need CAP_SYS_ADMIN"
        if not shutil.which("ip"):
            return "the ip command (iproute2) is not installed"
        self.remove_leftovers()
        taken = subprocess.run(["ip", "-o", "-4", "addr", "show", "to", self.subnet], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        if taken:
            return f"{self.subnet} is already in use here ({taken.split()[1]})"
        why = self.ip("netns", "add", self.ns)
        if why:
            return why
        self.made = True
        for args in (("link", "add", self.outer, "type", "veth", "peer", "name", self.inner, "netns", self.ns),
                     ("addr", "add", self.address + "/30", "dev", self.outer),
                     # While the cable is out, what is sent to the host goes nowhere (not to the
                     # default route).
                     ("route", "add", "blackhole", self.subnet, "metric", BLACKHOLE_METRIC),
                     ("link", "set", self.outer, "up"),
                     ("-n", self.ns, "addr", "add", self.peer + "/30", "dev", self.inner),
                     ("-n", self.ns, "link", "set", self.inner, "up"),
                     ("-n", self.ns, "link", "set", "lo", "up")):
            why = self.ip(*args)
            if why:
                return why
        return ""

    def cable(self, up):
        """Plugs the host's cable in or pulls it. "switch": the other end of the veth pair (the
        switch's port) up or down; the host's interface stays up without a carrier, its address and
        routes stay, nothing gets through either way. "host": the host's own interface down, as a
        host that deconfigures a link without carrier: its routes go, connecting is refused at once
        ("Network unreachable"). "" on success, else why not."""
        state = "up" if up else "down"
        why = self.ip("link", "set", self.outer, state) if self.pull == "switch" else \
            self.ip("-n", self.ns, "link", "set", self.inner, state)
        if not why:
            self.down = not up
        return why

    def exec_prefix(self):
        return ["ip", "netns", "exec", self.ns]  # execs the program: the PID is the program's

    def tear_down(self):
        if self.made:
            self.made = False
            self.remove(self.ns)
            self.ip("route", "del", "blackhole", self.subnet, "metric", BLACKHOLE_METRIC)

    @classmethod
    def remove(cls, ns):
        """Kills what still runs in namespace @ns, deletes it (its end of the veth pair with it,
        and so the pair) and the pair's other end if it outlived it."""
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, timeout=10).stdout
        for pid in pids.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        cls.ip("netns", "del", ns)
        if os.path.exists(f"/sys/class/net/{ns}r"):
            cls.ip("link", "del", ns + "r")

    @classmethod
    def remove_leftovers(cls):
        """The namespaces and veth pairs of earlier soaks whose process is gone (killed before its
        clean-up)."""
        listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
        names = {line.split()[0] for line in listing.splitlines() if line.strip()}
        try:
            names |= {n[:-1] for n in os.listdir("/sys/class/net") if n.endswith("r")}
        except OSError:
            pass
        for name in sorted(names):
            m = cls.PATTERN.match(name)
            if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))):
                log(f"removing the network namespace of an earlier soak (PID {m.group(1)} gone): {name}")
                cls.remove(name)
        # Their blackhole routes: those of no soak's veth pair left.
        routes = subprocess.run(["ip", "-4", "route", "show", "type", "blackhole", "root", "10.215.0.0/16"],
                                capture_output=True, text=True, timeout=10).stdout
        for line in routes.splitlines():
            f = line.split()
            if len(f) >= 4 and f[0] == "blackhole" and f[2:4] == ["metric", BLACKHOLE_METRIC]:
                owner = subprocess.run(["ip", "-o", "-4", "addr", "show", "to", f[1]], capture_output=True,
                                       text=True, timeout=10).stdout
                if not owner.strip():
                    cls.ip("route", "del", "blackhole", f[1], "metric", BLACKHOLE_METRIC)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Proc:
    """One supervised process: its command line, its log, the Popen of its current incarnation;
    on the second host if netns is set."""

    def __init__(self, soak, name, role, argv):
        self.soak, self.name, self.role, self.argv = soak, name, role, argv
        self.netns = None
        self.popen = None
        self.killed = False  # the soak killed the current incarnation
        self.stopped = False
        self.restarts = 0
        self.first_sample = None
        self.last_sample = None
        self.peak = (0, 0)

    def start(self):
        logf = open(os.path.join(self.soak.run_dir, "logs", self.name + ".log"), "ab")
        prefix = self.soak.host.exec_prefix() if self.netns else []
        self.popen = subprocess.Popen(prefix + self.argv, stdout=logf, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=self.soak.env, cwd=self.soak.run_dir)
        logf.close()
        self.killed = False
        self.stopped = False

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def sample(self):
        """(RSS in KiB, open descriptors) of the current incarnation, or None."""
        if not self.alive():
            return None
        pid = self.popen.pid
        try:
            rss = 0
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return None
        return rss, fds


class Soak:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.run_dir = os.path.abspath(args.run_dir) if args.run_dir else tempfile.mkdtemp(prefix="dialog-soak-")
        for old in ("logs", "is"):  # a fresh partition every time, also in a reused --run-dir
            shutil.rmtree(os.path.join(self.run_dir, old), ignore_errors=True)
        os.makedirs(os.path.join(self.run_dir, "logs"), exist_ok=True)
        os.makedirs(os.path.join(self.run_dir, "is"), exist_ok=True)
        self.kinds = list(dict.fromkeys(args.faults.split(","))) if args.faults else list(KINDS)
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds:
            raise SystemExit(f"soak: unknown fault kind {','.join(unknown)!r} (kinds: {', '.join(KINDS)})")
        self.host = None  # the second host, while cable faults are injected
        self.unavailable = []  # fault kinds that cannot be injected here, with the reason
        self.address = "127.0.0.1"  # where the Control Servers listen
        self.primary_port = self.standby_port = 0
        self.env = dict(os.environ)
        self.env["QT_QPA_PLATFORM"] = "offscreen"
        # Every log line with its time, so that a failure can be followed across the processes.
        self.env.setdefault("QT_MESSAGE_PATTERN", "%{time hh:mm:ss.zzz} %{category}: %{message}")
        self.env.pop("DIALOG_ADVERTISE", None)
        self.env.pop("DIALOG_CONTROL_SERVER", None)
        # With a second host the Control Servers listen on its network without a shared secret:
        # open on purpose (they refuse to otherwise).
        self.env["DIALOG_INSECURE"] = "1"
        self.types = os.path.join(SOURCE, "resources", "is-types")
        self.procs = {}
        self.failures = {k: [] for k in ("recovery", "writes", "subscribers", "resources", "crashes", "servers")}
        self.faults = {}
        self.recoveries = []
        self.acked = {}  # object -> last acknowledged value
        self.writes_acked = 0
        self.writes_failed = 0
        self.watchers = {}
        self.lock = threading.Lock()
        self.stop_flag = False
        isserver_help = self.run(["dialog-isserver", "--help"], timeout=10).stdout
        self.has_journal = "--journal" in isserver_help
        self.journal = self.has_journal and not args.no_journal
        self.skip = set(filter(None, args.skip.split(",")))
        if not self.journal and not args.kill_is_without_journal:
            # Without a write-ahead journal an IS server loses what was acknowledged since its
            # last checkpoint when killed: the writes invariant would fail by design.
            log("IS servers without a journal (--no-journal, or none in this build): kill:isserver is skipped")
            self.skip.add("kill:isserver")
        self.skipped = sorted(self.skip)

    # ---- processes -------------------------------------------------------------------------
    def exe(self, name):
        return os.path.join(self.bin, name)

    def run(self, argv, timeout=15):
        return subprocess.run([self.exe(argv[0])] + argv[1:], capture_output=True, text=True, timeout=timeout,
                              env=self.env, cwd=self.run_dir)

    def second_host(self):
        """The processes on the second host: with split or flap faults, the standby too."""
        split = self.host and any(k in self.kinds for k in ("split", "flap"))
        return SECOND_HOST + (["Standby"] if split else [])

    def cs_address(self, name):
        """Where the Control Server @name listens."""
        return self.host.peer if self.host and name in self.second_host() else self.address

    def add(self, name, role, argv):
        p = Proc(self, name, role, [self.exe(argv[0])] + argv[1:])
        if self.host and name in self.second_host():
            p.netns = self.host.ns
        self.procs[name] = p
        return p

    def make_network(self):
        """The second host, if cable faults are asked for and namespaces can be made (else the kind
        is skipped, said once); then the Control Servers' address and ports."""
        wanted = [k for k in self.kinds if k in NETWORK_KINDS]
        if wanted:
            host = Host(self.args.cable_pull)
            why = host.set_up()
            if why:
                host.tear_down()
                log(f"no second host ({why}): {', '.join(wanted)} faults are skipped")
                for k in wanted:
                    self.kinds.remove(k)
                    self.unavailable.append(f"{k} ({why})")
                if not self.kinds:
                    raise SystemExit("soak: no fault kind left to inject")
            else:
                self.host = host
                self.address = host.address
        self.primary_port, self.standby_port = free_port(self.address), free_port(self.address)
        self.env["DIALOG_CONTROL_SERVER"] = (f"{self.cs_address('ControlServer')}:{self.primary_port},"
                                             f"{self.cs_address('Standby')}:{self.standby_port}")

    def cs_args(self, name, port):
        where = self.cs_address(name)
        return ["dialog-controlserver", "--port", str(port)] + (["--bind", where, "--advertise", where]
                                                                if self.host else [])

    def partition(self):
        here = self.address if self.host else "localhost"
        slaves = [{"name": n, "kind": k, "host": self.host.peer if self.host and n in SECOND_HOST else here, "args": a}
                  for n, k, a in SLAVES]
        doc = {"name": "soak", "control_server": {"host": here, "port": self.primary_port},
               "is_types_dir": self.types,
               "is_servers": [{"name": "RunParams", "host": "localhost"}, {"name": "DAQ", "host": "localhost"}],
               "master": {"name": "Master", "host": "localhost", "transition_timeout_ms": 10000},
               "slaves": slaves}
        path = os.path.join(self.run_dir, "soak.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
        return path

    def setup(self):
        part = self.partition()
        isargs = ["--types", self.types, "--data-dir", os.path.join(self.run_dir, "is"), "--checkpoint-s", "2"]
        if self.journal:
            isargs.append("--journal")  # the default with --data-dir; said for the record
        elif self.has_journal:
            isargs.append("--no-journal")
        self.add("ControlServer", "controlserver", self.cs_args("ControlServer", self.primary_port))
        self.add("Standby", "standby", self.cs_args("Standby", self.standby_port) +
                 ["--standby-of", f"{self.cs_address('ControlServer')}:{self.primary_port}"])
        self.add("RunParams", "isserver", ["dialog-isserver", "--name", "RunParams"] + isargs)
        self.add("DAQ", "isserver", ["dialog-isserver", "--name", "DAQ"] + isargs)
        self.add("Mirror", "mirror", ["dialog-isserver", "--name", "Mirror", "--mirror-of", "RunParams",
                                      "--types", self.types])
        self.add("Master", "master", ["dialog-master", "--config", part, "--is-types", self.types,
                                       "--run-number-file", os.path.join(self.run_dir, "runnumber")])
        for n, k, a in SLAVES:
            self.add(n, "slave", ["dialog-slave", "--kind", k, "--name", n, "--run-params-server", "RunParams",
                                  "--daq-server", "DAQ", "--is-types", self.types] + a)
        if not self.args.no_gui and os.path.exists(self.exe("dialog-runcontrol")):
            self.add("GUI-runcontrol", "gui", ["dialog-runcontrol", "--master", "Master", "--monitor"])
            self.add("GUI-ismonitor", "gui", ["dialog-ismonitor"])
        order = ["ControlServer", "Standby", "RunParams", "DAQ", "Mirror", "Master"] + [n for n, _, _ in SLAVES]
        order += [n for n in self.procs if n.startswith("GUI-")]
        for name in order:
            self.procs[name].start()
            if name in ("ControlServer", "Standby"):
                time.sleep(0.5)
        self.wait_registered()
        self.start_watchers()
        self.transition("configure", "Configured")
        self.transition("start", "Running")

    def wait_registered(self, timeout=60):
        deadline = time.time() + timeout
        want = ["Master"] + [n for n, _, _ in SLAVES]
        while time.time() < deadline:
            r = self.run(["dialogctl", "ls", "--json"], timeout=15)
            if r.returncode == 0 and all(f'"{n}"' in r.stdout for n in want) and \
                    all(f"IS.{s}" in r.stdout for s in ("RunParams", "DAQ", "Mirror")):
                return
            time.sleep(1)
        raise SystemExit("soak: the partition did not come up (see %s/logs)" % self.run_dir)

    def transition(self, command, state, timeout=40):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.run(["dialogctl", "send", "RunCtrl.Master.Command", command], timeout=15)
            t = time.time()
            while time.time() < min(deadline, t + 10):
                if self.master_state().get("state") == state:
                    return
                time.sleep(0.5)
        raise SystemExit(f"soak: '{command}' did not bring the run to {state} (see {self.run_dir}/logs)")

    def master_state(self):
        try:
            r = self.run(["dialogctl", "get", "RunCtrl.Master.State", "--count", "1", "--json", "--timeout-ms", "3000"],
                         timeout=10)
        except subprocess.TimeoutExpired:
            return {}
        for line in r.stdout.splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            data = doc.get("data", doc)
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except ValueError:
                    continue
            if isinstance(data, dict):
                return data
        return {}

    def running(self):
        st = self.master_state()
        if st.get("state") != "Running":
            return False
        slaves = st.get("slaves", {})
        if isinstance(slaves, dict):
            states = [v.get("state", v) if isinstance(v, dict) else v for v in slaves.values()]
        else:
            states = [s.get("state") for s in slaves if isinstance(s, dict)]
        return len(states) == len(SLAVES) and all(s == "Running" for s in states)

    # ---- IS writes and subscribers --------------------------------------------------------
    def start_watchers(self):
        for server in ("RunParams", "Mirror"):
            f = open(os.path.join(self.run_dir, "logs", f"watch-{server}.log"), "w")
            p = subprocess.Popen([self.exe("dialogctl"), "is", "watch", server, "--regex", "Soak\\..*", "--json",
                                  "--snapshot"],
                                 stdout=subprocess.PIPE, stderr=f, text=True, env=self.env, cwd=self.run_dir)
            f.close()
            self.watchers[server] = {"popen": p, "last": {}}
            threading.Thread(target=self.read_watch, args=(server,), daemon=True).start()

    def read_watch(self, server):
        w = self.watchers[server]
        for line in w["popen"].stdout:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            name = doc.get("name", "")
            name = name.split(".", 1)[1] if name.startswith(server + ".") else name
            value = doc.get("value") or {}
            with self.lock:
                if doc.get("event", doc.get("kind")) in ("removed", "remove", "Removed"):
                    w["last"].pop(name, None)
                elif isinstance(value, dict) and "runType" in value:
                    w["last"][name] = value["runType"]

    def writer(self):
        n = 0
        while not self.stop_flag:
            n += 1
            obj = f"Soak.W{n % WRITE_OBJECTS}"
            value = f"v{n}"
            try:
                r = self.run(["dialogctl", "is", "put", "RunParams." + obj, "--type", "RunInfo", f"runType={value}",
                              f"activeTime={n}", "--timeout-ms", "3000"], timeout=10)
                ok = r.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            with self.lock:
                if ok:
                    self.acked[obj] = value
                    self.writes_acked += 1
                else:
                    self.writes_failed += 1
            time.sleep(self.args.write_interval)

    def read_object(self, server, obj):
        try:
            r = self.run(["dialogctl", "is", "get", f"{server}.{obj}", "--json", "--timeout-ms", "3000"], timeout=10)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode != 0:
            return None
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            return None
        value = doc.get("value", doc)
        return value.get("runType") if isinstance(value, dict) else None

    def check_writes(self, when):
        """Every acknowledged write is there with (at least) its value: a later write to the same
        object may have landed without its acknowledgement yet."""
        with self.lock:
            acked = dict(self.acked)
        bad = []
        for obj, value in acked.items():
            got = self.read_object("RunParams", obj)
            if got is None or int(got[1:]) < int(value[1:]):
                bad.append(f"{obj}: acknowledged {value}, found {got}")
        if bad:
            self.failures["writes"].append(f"{when}: " + "; ".join(bad))
        return len(acked)

    # ---- faults ---------------------------------------------------------------------------
    def current_role(self, p):
        """A Control Server's role is what it does now: "controlserver" while it serves (listens on
        its port), "standby" while it is the spare; they swap at every take-over."""
        if p.role not in ("controlserver", "standby"):
            return p.role
        port = int(p.argv[p.argv.index("--port") + 1])
        return "controlserver" if self.listening(port, self.cs_address(p.name)) else "standby"

    def victims(self, kind):
        """(role, process) that may get a fault of @kind: a cable only on the second host."""
        roles = self.args.roles.split(",")
        return [(r, p) for p in self.procs.values() if p.role in roles and (kind not in NETWORK_KINDS or p.netns)
                for r in [self.current_role(p)] if self.allowed(kind, r)]

    def allowed(self, kind, role):
        return f"{kind}:{role}" not in self.skip

    def inject(self):
        # The kind first, then its victim: each kind as often, whatever its number of victims.
        choices = {k: v for k in self.kinds for v in [self.victims(k)] if v}
        if not choices:
            raise SystemExit("soak: --faults, --roles and --skip leave no fault to inject")
        kind = random.choice(list(choices))
        role, victim = random.choice(choices[kind])
        key = f"{kind}:{role}"
        self.faults[key] = self.faults.get(key, 0) + 1
        if kind in NETWORK_KINDS:
            cut = ", ".join(self.second_host())
            log(f"fault {kind} {victim.name} (host {self.host.peer}: {cut})")
        else:
            log(f"fault {kind} {victim.name}")
        if kind == "kill":
            victim.killed = True
            victim.popen.send_signal(signal.SIGKILL)
            victim.popen.wait()
            time.sleep(random.uniform(0.1, 1.0))
            if victim.role == "controlserver" or victim.role == "standby":
                self.restart_control_server(victim)
            else:
                victim.start()
            victim.restarts += 1
            t0 = time.time()
        elif kind == "stop":
            victim.stopped = True
            victim.popen.send_signal(signal.SIGSTOP)
            time.sleep(self.args.stop_s)
            victim.popen.send_signal(signal.SIGCONT)
            victim.stopped = False
            t0 = time.time()
        else:
            if kind == "cable":
                pulls = [(self.args.stop_s, 0)]
            elif kind == "split":  # longer than a takeover (the standby notices, then waits as long)
                pulls = [(random.uniform(2.5, 4) * self.args.stop_s, 0)]
            else:  # five flaps: most shorter than a takeover, some longer (the standby takes over)
                pulls = [(random.uniform(0.3, 1.5) if random.random() < 0.7 else random.uniform(2.5, 3) *
                          self.args.stop_s, random.uniform(0.5, 2.0)) for _ in range(5)]
            for down, up in pulls:
                why = self.host.cable(False)
                if why:
                    raise SystemExit(f"soak: cannot pull the cable: {why}")
                time.sleep(down)
                why = self.host.cable(True)
                if why:
                    raise SystemExit(f"soak: cannot plug the cable back in: {why}")
                time.sleep(up)
            t0 = time.time()
        if kind in ("split", "flap"):
            self.await_one_server(key, t0)
        self.await_recovery(key, victim, t0)
        if victim.role == "isserver" and victim.name == "RunParams" and kind == "kill":
            self.check_writes(f"after kill of {victim.name}")

    def await_one_server(self, key, t0):
        """After a heal: one Control Server serves (the other steps down and is its standby)."""
        servers = [(n, int(self.procs[n].argv[self.procs[n].argv.index("--port") + 1])) for n in
                   ("ControlServer", "Standby")]
        deadline = t0 + self.args.recovery_s
        while time.time() < deadline:
            serving = [n for n, port in servers if self.listening(port, self.cs_address(n))]
            if len(serving) == 1:
                log(f"  one Control Server ({serving[0]}) after {time.time() - t0:.2f} s")
                return
            time.sleep(0.1)
        self.failures["servers"].append(f"{key}: {len(serving)} Control Servers serve {self.args.recovery_s} s "
                                        f"after the heal")
        log(f"  NOT one Control Server: {serving}")

    def restart_control_server(self, victim):
        """A supervisor restarts a Control Server as the spare of the one still serving (README: a
        primary that comes back is started as --standby-of the active one)."""
        other = self.procs["Standby" if victim.name == "ControlServer" else "ControlServer"]
        my_port = victim.argv[victim.argv.index("--port") + 1]
        other_port = other.argv[other.argv.index("--port") + 1]
        argv = [self.exe(a) if i == 0 else a for i, a in enumerate(self.cs_args(victim.name, my_port))]
        if other.alive():
            # Only once the other one serves (a standby takes over after its heartbeat misses):
            # a spare of a server that does not answer yet would take over at once itself.
            deadline = time.time() + 20
            while time.time() < deadline and not self.listening(int(other_port), self.cs_address(other.name)):
                time.sleep(0.2)
            argv += ["--standby-of", f"{self.cs_address(other.name)}:{other_port}"]
        victim.argv = argv
        victim.start()

    def listening(self, port, address=None):
        try:
            with socket.create_connection((address or self.address, port), timeout=1):
                return True
        except OSError:
            return False

    def await_recovery(self, key, victim, t0):
        deadline = t0 + self.args.recovery_s
        while time.time() < deadline:
            if self.running():
                dt = time.time() - t0
                self.recoveries.append((key, dt))
                log(f"  back to Running after {dt:.2f} s")
                return
            time.sleep(0.25)
        st = self.master_state()
        self.failures["recovery"].append(
            f"{key} ({victim.name}): not Running {self.args.recovery_s} s after the fault: state "
            f"{st.get('state')} {st.get('error', '')}")
        log(f"  NOT back to Running: {st.get('state')} {st.get('error', '')}")
        # Carry on: the operator's way back (restart what the master blames, then reset, configure,
        # start), so the faults after this one are still tested.
        blamed = list(st.get("culprits", []))
        error = st.get("error", "")
        if "not running: " in error:  # e.g. "configure failed: not running: FE2, FE3"
            blamed += [n.strip() for n in error.split("not running: ", 1)[1].split(",")]
        for name in dict.fromkeys(blamed):
            p = self.procs.get(name)
            if p and p.alive():
                log(f"  operator restarts {name}")
                p.killed = True
                p.popen.kill()
                p.popen.wait()
                p.start()
                p.restarts += 1
        time.sleep(2)
        for command, state in (("reset", "Initial"), ("configure", "Configured"), ("start", "Running")):
            try:
                self.transition(command, state, timeout=30)
            except SystemExit as e:
                log(f"  {e}")
                break

    # ---- resources and crashes -------------------------------------------------------------
    def watch_health(self):
        for p in self.procs.values():
            if p.popen.poll() is not None and not p.killed:
                self.failures["crashes"].append(f"{p.name} exited by itself (status {p.popen.returncode})")
                log(f"CRASH {p.name} exited with {p.popen.returncode}; restarting")
                p.start()
            s = p.sample()
            if s:
                if p.first_sample is None and time.time() > self.warm_until:
                    p.first_sample = s
                p.last_sample = s
                p.peak = (max(p.peak[0], s[0]), max(p.peak[1], s[1]))

    def check_resources(self):
        for p in self.procs.values():
            if not p.first_sample or not p.last_sample:
                continue
            (rss0, fd0), (rss1, fd1) = p.first_sample, p.last_sample
            if rss1 > 2 * rss0 + 64 * 1024 or fd1 > fd0 + 64:
                self.failures["resources"].append(
                    f"{p.name}: RSS {rss0} -> {rss1} KiB, descriptors {fd0} -> {fd1}")

    # ---- main ------------------------------------------------------------------------------
    def main(self):
        random.seed(self.args.seed)
        try:
            self.make_network()
            log(f"soak in {self.run_dir}, Control Servers {self.cs_address('ControlServer')}:{self.primary_port} "
                f"(primary), {self.cs_address('Standby')}:{self.standby_port} (standby); IS journal {self.journal_state()}; faults {','.join(self.kinds)}")
            if self.host:
                log(f"second host: namespace {self.host.ns}, {self.host.peer} (cable {self.host.inner} - "
                    f"{self.host.outer} {self.host.address}): {', '.join(self.second_host())}")
            self.setup()
            self.warm_until = time.time() + 10
            wt = threading.Thread(target=self.writer, daemon=True)
            wt.start()
            end = time.time() + self.args.minutes * 60
            next_fault = time.time() + 10
            while time.time() < end:
                self.watch_health()
                if time.time() >= next_fault:
                    self.inject()
                    next_fault = time.time() + random.uniform(self.args.interval_s / 2, self.args.interval_s * 1.5)
                time.sleep(0.5)
            self.watch_health()
            self.stop_flag = True
            wt.join(timeout=20)
            time.sleep(3)  # the last notifications reach the subscribers
            checked = self.check_writes("at the end")
            self.check_subscribers()
            self.check_resources()
            self.report(checked)
        finally:
            self.teardown()
        return 1 if any(self.failures.values()) else 0

    def check_subscribers(self):
        """Every subscriber ends with the server's last values. A fault may have hit just before the
        end (a mirror killed a second before the writer stops is restarted, loads its copy and is
        found again by its subscriber): each watcher is given SUBSCRIBERS_SETTLE_S to catch up,
        and the report says how long it took."""
        with self.lock:
            acked = dict(self.acked)
        current = {obj: self.read_object("RunParams", obj) for obj in acked}
        t0 = time.time()
        for server, w in self.watchers.items():
            if w["popen"].poll() is not None:
                self.failures["subscribers"].append(f"watch {server} exited ({w['popen'].returncode})")
                continue
            while True:
                with self.lock:
                    last = dict(w["last"])
                wrong = [f"{obj}: has {last.get(obj)}, server {current[obj]}" for obj in acked
                         if last.get(obj) != current[obj]]
                if not wrong or time.time() - t0 > SUBSCRIBERS_SETTLE_S:
                    break
                time.sleep(0.2)
            if wrong:
                if server != "RunParams":  # which one is behind: the server watched, or its subscriber
                    wrong.append(f"{server} itself has " + ", ".join(
                        f"{obj} {self.read_object(server, obj)}" for obj in acked if last.get(obj) != current[obj]))
                self.failures["subscribers"].append(
                    f"watch {server} after {SUBSCRIBERS_SETTLE_S} s: " + "; ".join(wrong))
            elif time.time() - t0 > 0.5:
                log(f"watch {server} caught up {time.time() - t0:.2f} s after the end")

    def journal_state(self):
        return "on" if self.journal else "off (--no-journal)" if self.has_journal else "not available"

    def report(self, checked):
        times = [dt for _, dt in self.recoveries]
        print("\n==== soak report ====")
        print(f"duration {self.args.minutes} min, seed {self.args.seed}, run dir {self.run_dir}")
        print("faults: " + ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())))
        if self.skipped:
            print("not injected (--skip or no journal): " + ", ".join(self.skipped))
        if self.unavailable:
            print("not available here: " + ", ".join(self.unavailable))
        if self.host:
            print(f"second host {self.host.peer} (namespace {self.host.ns}): {', '.join(self.second_host())}; "
                  f"Control Servers at {self.cs_address('ControlServer')}, {self.cs_address('Standby')}")
        if times:
            print(f"recoveries: {len(times)}, median {statistics.median(times):.2f} s, max {max(times):.2f} s")
        by = {}
        for key, dt in self.recoveries:
            by.setdefault(key, []).append(dt)
        for key, ts in sorted(by.items()):
            print(f"  {key:22} n={len(ts):3}  median {statistics.median(ts):.2f} s  max {max(ts):.2f} s")
        print(f"IS writes: {self.writes_acked} acknowledged, {self.writes_failed} not acknowledged; "
              f"{checked} objects checked (journal {self.journal_state()})")
        print("process           restarts  RSS KiB start -> end (peak)   fds start -> end (peak)")
        for p in self.procs.values():
            a, b = p.first_sample or (0, 0), p.last_sample or (0, 0)
            print(f"  {p.name:16} {p.restarts:4}   {a[0]:8} -> {b[0]:8} ({p.peak[0]:8})   "
                  f"{a[1]:4} -> {b[1]:4} ({p.peak[1]:4})")
        for inv, fails in self.failures.items():
            print(f"invariant {inv:12} {'OK' if not fails else 'FAILED (%d)' % len(fails)}")
            for f in fails[:20]:
                print(f"    {f}")
        sys.stdout.flush()

    def teardown(self):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C must not leave children behind
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.stop_flag = True
        if self.host and self.host.down:
            self.host.cable(True)  # its processes say goodbye to the others
        for w in self.watchers.values():
            w["popen"].terminate()
        for p in self.procs.values():
            if p.alive():
                if p.stopped:
                    p.popen.send_signal(signal.SIGCONT)
                p.popen.terminate()
        for p in list(self.procs.values()) + [w["popen"] for w in self.watchers.values()]:
            popen = p.popen if isinstance(p, Proc) else p
            if popen is None:
                continue
            try:
                popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()
        if self.host:
            self.host.tear_down()  # and whatever still runs in it


def interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    # Also when started in the background (SIGINT ignored): every child is reaped on the way out.
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(SOURCE, "build", "bin"))
    ap.add_argument("--minutes", type=float, default=2)
    ap.add_argument("--faults", help="fault kinds: kill, stop, cable, split, flap (default: all; the network "
                    "kinds where network namespaces can be made, else skipped)")
    ap.add_argument("--roles", default=",".join(ROLES), help="who gets faults: " + ", ".join(ROLES))
    ap.add_argument("--interval-s", type=float, default=8, help="mean time between faults")
    ap.add_argument("--stop-s", type=float, default=3,
                    help="how long a SIGSTOPped process stays stopped, and a pulled cable out")
    ap.add_argument("--cable-pull", choices=["switch", "host"], default="switch",
                    help="how a cable is pulled: switch (default: the switch's end of the veth pair down, the host's "
                    "interface loses its carrier) or host (the host's interface down, its routes gone)")
    ap.add_argument("--recovery-s", type=float, default=30, help="bound of a recovery")
    ap.add_argument("--write-interval", type=float, default=0.3)
    ap.add_argument("--skip", default="",
                    help="fault kinds not injected, as KIND:ROLE (e.g. stop:slave, cable:mirror)")
    ap.add_argument("--kill-is-without-journal", action="store_true",
                    help="SIGKILL IS servers even when dialog-isserver has no --journal (the writes "
                    "acknowledged since the last checkpoint are then lost, and the writes invariant says so)")
    ap.add_argument("--no-journal", action="store_true",
                    help="IS servers with --no-journal (with --kill-is-without-journal: shows what the journal "
                    "prevents, the writes invariant fails)")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--run-dir")
    ap.add_argument("--no-gui", action="store_true")
    sys.exit(Soak(ap.parse_args()).main())


if __name__ == "__main__":
    main()
