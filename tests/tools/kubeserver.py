#!/usr/bin/env python3
# kubeserver.py: a loopback Kubernetes API test server: discovery, server-side apply, get/list/delete, status, ClusterOperator, CRD, Job and workload status simulation, fault injection.
"""Kubernetes API test server (Python 3 standard library only).

There is no kube-apiserver on these machines; this implements the part of
the API that airlock's kube client and updater use, checked against the
real kubectl (tests/integration/test_kubeserver.sh).

Usage:
    python3 tests/tools/kubeserver.py --port-file FILE
        [--host 127.0.0.1] [--port 0]
        [--tls CERT KEY] [--client-ca CA]
        [--token T]
        [--state-file FILE]
        [--kinds FILE]
        [--co-delay SECONDS]
        [-v]

Binds a loopback address (127.0.0.1 by default, port 0 = any free port),
writes the port number to FILE atomically (temp + rename) once it listens,
and serves until killed (SIGTERM/SIGINT; stop it by PID). One thread per
connection, so a hung request never blocks another; HTTP/1.1 keep-alive.

  --tls CERT KEY     speak HTTPS with this PEM certificate and key.
  --client-ca CA     (with --tls) verify a client certificate against CA
                     when the client presents one (a bad one fails the
                     handshake); a client with a verified certificate counts
                     as authenticated even with --token.
  --token T          every API request must carry "Authorization: Bearer T"
                     (or a verified client certificate), else 401 Status.
                     /_control/ endpoints never need it. Note: kubectl (and
                     airlock's kube client) send a token only over TLS, so
                     use --token together with --tls.
  --state-file FILE  load objects from FILE at start (if it exists) and
                     write every change to it atomically (temp + rename),
                     so the "cluster" survives a restart (or kill -9) of this
                     server and of the client. Faults and the request log
                     are not persisted; pending ClusterOperator simulations
                     are (they restart their delay).
  --kinds FILE       extra kinds: a JSON list of kind objects, or the
                     {"kinds": [...]} body of POST /_control/kinds below.
  --virtual-clock    timers run on the time each request's
                     X-Airlock-Test-Clock header gives (milliseconds of
                     airlock's virtual clock, AIRLOCK_TEST_CLOCK=virtual):
                     a timer fires once a request shows its time passed
  --co-delay S       delay before a ClusterOperator reports its status
                     (default 0.2 seconds).

API (JSON only; errors are metav1 Status objects with code, reason, message):
  GET  /version, /healthz, /readyz        (/openapi/* answers 404)
  GET  /api                       APIVersions {"versions": ["v1"]}
  GET  /api/v1                    APIResourceList
  GET  /apis                      APIGroupList
  GET  /apis/<group>/<version>    APIResourceList (404 if unknown)
  Resource paths, core: /api/v1[/namespaces/<ns>]/<plural>[/<name>[/status]]
                 other: /apis/<g>/<v>[/namespaces/<ns>]/<plural>[/<name>[/status]]
  GET    collection           List (kind "<Kind>List", items sorted by
                              namespace/name), ?labelSelector= with
                              "k=v", "k==v", "k!=v", "k", "!k" terms joined
                              by ","; a cluster-wide list of a namespaced
                              kind is /<plural> without /namespaces/<ns>
  GET    object               the object, 404 NotFound if missing
  PATCH  object               Content-Type decides:
           application/apply-patch+yaml   server-side apply. Body must be
               JSON (kubectl sends JSON, verified; YAML bodies get 415).
               ?fieldManager= is required (400 otherwise); ?force=true
               takes over fields; without force, changing a field value
               that another manager applied gives 409 Conflict. Creates the
               object when missing (201), else 200. For a kind with a
               status subresource, "status" in the body is ignored (as in
               kube-apiserver); apply to /status to set it.
           application/merge-patch+json and
           application/strategic-merge-patch+json   RFC 7386 merge
               (strategic treated as plain merge); 404 if missing.
           anything else           415.
  PUT    object               replace (200; 201 when created); a non-empty
                              metadata.resourceVersion must match (409).
  POST   collection           create (201, 409 AlreadyExists).
  DELETE object               200 with the object; deleting a Namespace
                              deletes its objects, deleting a CRD drops its
                              kind and its objects.
  .../<name>/status           GET; PATCH (apply or merge: only "status" is
                              taken); PUT (only "status" is taken).
  Namespaced objects need their Namespace to exist (404 otherwise), like a
  real cluster; "default", "kube-system" and "kube-public" exist at start.
  Objects get metadata.uid, resourceVersion (one global counter, decimal
  string; bumped only when the object really changed), generation (bumped
  when anything outside metadata and status changes), creationTimestamp,
  and managedFields (one entry per manager: manager, operation, apiVersion,
  time, fieldsType "FieldsV1", fieldsV1 {} - minimal).

Built-in kinds (group/version kind plural, namespaced?, status?):
  v1: Namespace namespaces (cluster), ConfigMap configmaps, Secret secrets,
      ServiceAccount serviceaccounts, Service services (status)
  apps/v1: Deployment deployments (status), DaemonSet daemonsets (status)
  rbac.authorization.k8s.io/v1: ClusterRole clusterroles (cluster),
      ClusterRoleBinding clusterrolebindings (cluster), Role roles,
      RoleBinding rolebindings
  apiextensions.k8s.io/v1: CustomResourceDefinition
      customresourcedefinitions (cluster, status)
  config.openshift.io/v1: ClusterOperator clusteroperators (cluster,
      status), ClusterVersion clusterversions (cluster, status),
      FeatureGate featuregates (cluster, status), Proxy proxies (cluster,
      status: the updater's inject-proxy source), Infrastructure
      infrastructures (cluster, status)
  batch/v1: Job jobs (status)
  coordination.k8s.io/v1: Lease leases (the updater's lock; PUT with a
      stale resourceVersion is 409 Conflict, POST of an existing one 409)
Applying a CustomResourceDefinition registers its kind for every served
version (spec.group, spec.names.kind/plural, spec.scope, status when
spec.versions[].subresources.status is present): payload CRDs work. A CRD
for an already built-in kind (e.g. ClusterOperator) keeps the built-in.

ClusterOperator simulation:
  When a ClusterOperator is applied (create or update, main resource), the
  server takes the *target versions* from the applied manifest's
  status.versions (the payload writes the release version there); when the
  manifest has none, the target is [{"name": "operator", "version":
  "0.0.1-snapshot"}]. Per-name control settings (below) may override the
  version. After the delay (--co-delay, or the per-name delay) it writes the
  object's status:
    conditions Available=True, Progressing=False, Degraded=False
    (lastTransitionTime, reason "AsExpected"), versions = the target,
  and bumps resourceVersion. Until then the status stays what it was (an
  earlier version, or empty for a new object). Re-applying the same target
  once it is reached changes nothing. With "never": the status becomes
  Available=True, Progressing=True ("SimulatedStuck") and the versions are
  never updated. With "degraded": Degraded=True ("SimulatedDegraded",
  message from the setting), Available=True, Progressing=False, versions
  not updated.

Control API (no token needed; POST bodies are JSON; answers are JSON):
  POST /_control/fault    add a fault rule, answers {"id": N}:
        {"path": REGEX,          re.search on the path (no query), required
         "method": "PATCH",      or "*" (default) - any method
         "times": N,             how many matching requests it applies to;
                                 absent or 0 = forever
         "after": K,             let the first K matching requests through
         "status": CODE,         answer CODE with a Status body
         "retry_after": S,       add "Retry-After: S" (with status)
         "latency_ms": MS,       sleep before handling (alone: then the
                                 request is served normally)
         "hang": true,           never answer (until the client closes, or
                                 5 minutes)
         "reset": true,          close the connection with a TCP RST
         "body": REGEX}          only requests whose body matches
                                 (re.search on the UTF-8 text), e.g.
                                 fail only the status write that says
                                 "Completed"
        Rules are checked in the order added; the first matching rule that
        still has times left applies (and uses one).
  POST /_control/faults/clear   remove every fault rule
  GET  /_control/log      {"requests": [{"seq", "time" (epoch seconds,
        float, at arrival), "end" (at answer, null if never answered),
        "method", "path", "query", "status" (null if never answered),
        "fault" (rule id or null), "field_manager", "content_type"}]}
        ordered by arrival (seq from 1). /_control/ requests are not logged.
        ?since=SEQ gives only entries with seq > SEQ.
  POST /_control/log/clear      empty the log (seq keeps counting)
  GET  /_control/objects  {"items": [every stored object, sorted by
        apiVersion, kind, namespace, name]}
  POST /_control/objects  {"object": OBJ} store OBJ as is (plus uid,
        resourceVersion, ... when missing), bypassing faults and
        auth: to seed a cluster state.
  POST /_control/kinds    {"kinds": [{"group": "" or "x.io", "version":
        "v1", "kind": "Foo", "plural": "foos", "namespaced": true,
        "status": true}]} register kinds (as if by a CRD)
  POST /_control/operator {"name": "etcd" or "*" (default for all),
        "delay": S, "version": "4.16.1" (report this instead of the
        manifest's versions: every entry gets it), "never": true,
        "degraded": "message" or true}; {"name": X, "clear": true} drops X's
        settings. Applies to later applies and to pending simulations.
  POST /_control/status-sim  {"kind": "Deployment", "namespace": NS or "*",
        "name": N or "*", "steps": [{"after": S, "status": {...}}, ...]}:
        when a matching object is applied (main resource), its status is
        replaced by each step's status, S seconds after the apply (steps in
        order, S cumulative from the apply); "steps": [] means the status is
        never written; {"kind", "namespace", "name", "clear": true} drops
        the setting. Defaults without a setting (the CVO rules section):
          CustomResourceDefinition: NamesAccepted=True, Established=True
            after --crd-delay (default 0: at once); until then the kinds it
            defines are not served (404, absent from discovery), as a real
            API server serves a kind once its CRD is Established;
          batch/v1 Job: status {active: 1} at once, then after --job-delay
            (default 0.2 s) {succeeded: 1, conditions Complete=True};
          Deployment, DaemonSet: no status written.
        A CRD with a setting is not served until a step reports
        Established=True.
  POST /_control/cvo      {"enabled": true, "delay": S, "fail": {"reason":
        R, "message": M}, "never": true}: a simulated cluster-version-
        operator. When ClusterVersion "version" spec.desiredUpdate changes
        it checks for a signature ConfigMap of the image's digest in
        openshift-config-managed (label
        release.openshift.io/verification-signatures, a binaryData key
        sha256-<hex>-N: presence only, unless "force"): missing, it sets
        ReleaseAccepted=False (RetrievePayload, the CVO's message) and
        stops; else ReleaseAccepted=True, status.desired, a Partial history
        entry (a superseded Partial one gets its completionTime),
        Progressing=True; S seconds later (default 0.2) the entry becomes
        Completed (Available, Progressing=False), or with "fail"
        Failing=True with R and M (the entry stays Partial), or with
        "never" nothing more; "untrusted": true rejects every unforced
        release as if no signature verified with the CVO's keys.
        {"enabled": false} turns it off; reset too.
  POST /_control/reset    drop every object (then recreate the start
        namespaces), CRD-registered kinds, fault rules, operator settings,
        the log (seq restarts at 1). Kinds from --kinds and /_control/kinds
        stay.
  GET  /_control/health   {"ok": true}
"""

import argparse
import copy
import datetime
import heapq
import http.server
import json
import os
import re
import signal
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import uuid

LOOPBACK = ("127.0.0.1", "::1", "localhost")
MAX_BODY = 16 * 1024 * 1024
START_NAMESPACES = ("default", "kube-system", "kube-public")
DEFAULT_CO_VERSION = "0.0.1-snapshot"
SHORT_NAMES = {"namespaces": ["ns"], "configmaps": ["cm"],
               "serviceaccounts": ["sa"], "services": ["svc"],
               "deployments": ["deploy"], "daemonsets": ["ds"],
               "customresourcedefinitions": ["crd", "crds"],
               "clusteroperators": ["co"]}

BUILTIN_KINDS = [
    ("", "v1", "Namespace", "namespaces", False, True),
    ("", "v1", "ConfigMap", "configmaps", True, False),
    ("", "v1", "Secret", "secrets", True, False),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, False),
    ("", "v1", "Service", "services", True, True),
    ("apps", "v1", "Deployment", "deployments", True, True),
    ("apps", "v1", "DaemonSet", "daemonsets", True, True),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, False),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, False),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True, False),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, False),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False, True),
    ("config.openshift.io", "v1", "ClusterOperator", "clusteroperators", False, True),
    ("config.openshift.io", "v1", "ClusterVersion", "clusterversions", False, True),
    ("config.openshift.io", "v1", "FeatureGate", "featuregates", False, True),
    ("config.openshift.io", "v1", "Proxy", "proxies", False, True),
    ("config.openshift.io", "v1", "Infrastructure", "infrastructures", False, True),
    ("batch", "v1", "Job", "jobs", True, True),
]

# -- the updater's run: leader election ------------------------------------
# coordination.k8s.io/v1 Lease (namespaced, no status): the updater's
# cluster-side lock. Its compare-and-swap is the generic one above: POST
# answers 409 AlreadyExists for an existing name, PUT with a stale
# metadata.resourceVersion answers 409 Conflict. ClusterVersion status,
# ClusterOperator Upgradeable conditions and a cluster-version-operator
# Deployment are ordinary objects: seed them with POST /_control/objects.
UPDATER_KINDS = [
    ("coordination.k8s.io", "v1", "Lease", "leases", True, False),
]
BUILTIN_KINDS = BUILTIN_KINDS + UPDATER_KINDS


class ApiError(Exception):
    def __init__(self, code, reason, message, headers=None):
        Exception.__init__(self, message)
        self.code = code
        self.reason = reason
        self.message = message
        self.headers = headers or []


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def gv_of(group, version):
    return version if group == "" else group + "/" + version


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = copy.deepcopy(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def leaf_paths(obj, prefix=()):
    """Every leaf path of obj (dicts descend, everything else is a leaf)."""
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            yield from leaf_paths(v, prefix + (k,))
    else:
        yield prefix, obj


def get_path(obj, path):
    for k in path:
        if not isinstance(obj, dict) or k not in obj:
            return False, None
        obj = obj[k]
    return True, obj


def del_path(obj, path):
    """Remove path from obj, pruning dicts left empty by the removal."""
    if not path or not isinstance(obj, dict):
        return
    k = path[0]
    if k not in obj:
        return
    if len(path) == 1:
        del obj[k]
        return
    del_path(obj[k], path[1:])
    if isinstance(obj[k], dict) and not obj[k]:
        del obj[k]


def apply_merge(target, cfg):
    """Set every field of cfg into target (dicts merge, the rest replace)."""
    for k, v in cfg.items():
        if isinstance(v, dict) and isinstance(target.get(k), dict):
            apply_merge(target[k], v)
        else:
            target[k] = copy.deepcopy(v)


def strip_meta(cfg):
    """The applied configuration minus server-owned metadata."""
    cfg = copy.deepcopy(cfg)
    md = cfg.get("metadata")
    if isinstance(md, dict):
        for k in ("uid", "resourceVersion", "generation", "creationTimestamp",
                  "managedFields", "selfLink"):
            md.pop(k, None)
    return cfg


def match_selector(obj, selector):
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in selector.split(","):
        term = term.strip()
        if not term:
            continue
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "==" in term:
            k, v = term.split("==", 1)
            if labels.get(k.strip()) != v.strip():
                return False
        elif "=" in term:
            k, v = term.split("=", 1)
            if labels.get(k.strip()) != v.strip():
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


class Kind(object):
    def __init__(self, group, version, kind, plural, namespaced, status,
                 source):
        self.group = group
        self.version = version
        self.kind = kind
        self.plural = plural
        self.namespaced = bool(namespaced)
        self.status = bool(status)
        self.source = source  # "builtin", "option", "control", "crd"

    @property
    def gv(self):
        return gv_of(self.group, self.version)


class SimClock(object):
    """The simulation's timers. Real by default (threading.Timer); with
    --virtual-clock, time is the latest X-Airlock-Test-Clock (ms) a client
    sent (airlock's virtual clock, AIRLOCK_TEST_CLOCK=virtual), and a timer
    fires once a request shows that time has passed: the simulation then
    runs on the client's clock, so a deadline test takes no real time and
    no load can reorder what it sees."""

    class Pending(object):
        def __init__(self, due, seq, fn, args):
            self.due, self.seq, self.fn, self.args = due, seq, fn, args
            self.cancelled = False

        def cancel(self):
            self.cancelled = True

    def __init__(self, virtual):
        self.virtual = virtual
        self.now = None        # ms, once a client said
        self.queue = []        # heap of (due, seq, Pending)
        self.seq = 0
        self.mu = threading.Lock()

    def timer(self, delay, fn, args):
        if not self.virtual:
            t = threading.Timer(delay, fn, args)
            t.daemon = True
            t.start()
            return t
        with self.mu:
            self.seq += 1
            base = self.now if self.now is not None else 0
            p = SimClock.Pending(base + delay * 1000.0, self.seq, fn, args)
            heapq.heappush(self.queue, (p.due, p.seq, p))
            return p

    def stamp(self):
        """Seconds for the request log: the virtual time when virtual."""
        if self.virtual:
            with self.mu:
                return (self.now or 0) / 1000.0
        return time.time()

    def advance(self, header):
        """Move to the client's time (never back) and fire what is due,
        in order, outside the clock's lock (the callbacks take the
        cluster's)."""
        if not self.virtual or header is None:
            return
        try:
            t = float(header)
        except ValueError:
            return
        with self.mu:
            if self.now is None:
                # timers set before any client spoke start now
                self.queue = [(d + t, q, p) for d, q, p in self.queue]
                for d, q, p in self.queue:
                    p.due = d
                heapq.heapify(self.queue)
                self.now = t
            elif t > self.now:
                self.now = t
        while True:
            with self.mu:
                if not self.queue or self.queue[0][0] > self.now:
                    return
                _, _, p = heapq.heappop(self.queue)
            if not p.cancelled:
                p.fn(*p.args)


class Cluster(object):
    """All state, under one lock."""

    def __init__(self, args):
        self.lock = threading.RLock()
        self.args = args
        self.clock = SimClock(getattr(args, "virtual_clock", False))
        self.state_file = args.state_file
        self.kinds = []
        for g, v, k, p, ns, st in BUILTIN_KINDS:
            self.kinds.append(Kind(g, v, k, p, ns, st, "builtin"))
        self.objects = {}      # (group, plural, ns, name) -> object
        self.applied = {}      # key -> {manager: applied cfg}
        self.co_targets = {}   # CO name -> target versions list
        self.co_timers = {}    # CO name -> threading.Timer
        self.co_settings = {}  # name or "*" -> dict
        self.sim_settings = {}  # (kind, ns, name) -> steps (CVO rules)
        self.sim_timers = {}    # object key -> [threading.Timer]
        self.cvo_sim = None     # settings of the simulated CVO, or None
        self.faults = []
        self.fault_seq = 0
        self.log = []
        self.log_seq = 0
        self.rv = 0
        if args.kinds:
            with open(args.kinds) as f:
                lst = json.load(f)
            if isinstance(lst, dict):
                lst = lst.get("kinds", [])
            self.add_kinds(lst, "option")
        self.create_start_namespaces()
        if self.state_file and os.path.exists(self.state_file):
            self.load_state()
        self.save_state()

    # -- kinds -------------------------------------------------------------

    def add_kinds(self, lst, source):
        for d in lst:
            k = Kind(d.get("group", ""), d["version"], d["kind"], d["plural"],
                     d.get("namespaced", True), d.get("status", False),
                     source)
            if self.find_kind_plural(k.group, k.version, k.plural) is None:
                self.kinds.append(k)

    def find_kind_plural(self, group, version, plural):
        for k in self.kinds:
            if k.group == group and k.version == version and \
                    k.plural == plural and not getattr(k, "hidden", False):
                return k
        return None

    def find_kind(self, api_version, kind):
        for k in self.kinds:
            if k.gv == api_version and k.kind == kind and \
                    not getattr(k, "hidden", False):
                return k
        return None

    def register_crd(self, crd):
        spec = crd.get("spec") or {}
        group = spec.get("group", "")
        names = spec.get("names") or {}
        kind = names.get("kind")
        plural = names.get("plural")
        if not kind or not plural:
            return
        namespaced = spec.get("scope", "Namespaced") == "Namespaced"
        for v in spec.get("versions") or []:
            if not v.get("served", True) or "name" not in v:
                continue
            status = "status" in ((v.get("subresources") or {}))
            if self.find_kind_plural(group, v["name"], plural) is None:
                self.kinds.append(Kind(group, v["name"], kind, plural,
                                       namespaced, status, "crd"))

    def unregister_crd(self, crd):
        spec = crd.get("spec") or {}
        group = spec.get("group", "")
        plural = (spec.get("names") or {}).get("plural")
        self.kinds = [k for k in self.kinds if not (
            k.source == "crd" and k.group == group and k.plural == plural)]
        for key in list(self.objects):
            if key[0] == group and key[1] == plural:
                self.drop(key)

    # -- persistence -------------------------------------------------------

    def create_start_namespaces(self):
        for ns in START_NAMESPACES:
            key = ("", "namespaces", "", ns)
            if key not in self.objects:
                self.objects[key] = self.finish_new(
                    {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": ns}})

    def load_state(self):
        with open(self.state_file) as f:
            st = json.load(f)
        self.rv = max(self.rv, st.get("rv", 0))
        self.objects = {}
        self.applied = {}
        for ent in st.get("objects", []):
            key = tuple(ent["key"])
            self.objects[key] = ent["object"]
            self.applied[key] = ent.get("applied", {})
        for key, obj in list(self.objects.items()):
            if key[1] == "customresourcedefinitions":
                self.register_crd(obj)
        self.co_targets = st.get("co_targets", {})
        for name in list(self.co_targets):
            self.schedule_co(name)

    def save_state(self):
        if not self.state_file:
            return
        st = {"rv": self.rv,
              "objects": [{"key": list(k), "object": o,
                           "applied": self.applied.get(k, {})}
                          for k, o in sorted(self.objects.items())],
              "co_targets": self.co_targets}
        tmp = self.state_file + ".tmp.%d" % os.getpid()
        with open(tmp, "w") as f:
            json.dump(st, f)
        # Atomic against the server being killed (rename); no fsync: a
        # payload applies hundreds of objects and the tests never lose
        # power.
        os.replace(tmp, self.state_file)

    # -- objects -----------------------------------------------------------

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def finish_new(self, obj):
        md = obj.setdefault("metadata", {})
        md.setdefault("uid", str(uuid.uuid4()))
        md.setdefault("creationTimestamp", now_rfc3339())
        md.setdefault("generation", 1)
        md["resourceVersion"] = self.next_rv()
        return obj

    def drop(self, key):
        self.objects.pop(key, None)
        self.applied.pop(key, None)
        if key[1] == "clusteroperators":
            self.co_targets.pop(key[3], None)
            t = self.co_timers.pop(key[3], None)
            if t:
                t.cancel()

    def check_namespace(self, kind, ns):
        if kind.namespaced:
            if not ns:
                raise ApiError(400, "BadRequest",
                               "%s is namespaced: a namespace is required"
                               % kind.kind)
            if ("", "namespaces", "", ns) not in self.objects:
                raise ApiError(404, "NotFound",
                               'namespaces "%s" not found' % ns)

    def store(self, key, kind, old, new, manager, operation):
        """Store new (old may be None); bump rv/generation when changed."""
        md = new.setdefault("metadata", {})
        md["name"] = key[3]
        if kind.namespaced:
            md["namespace"] = key[2]
        else:
            md.pop("namespace", None)
        new["apiVersion"] = kind.gv
        new["kind"] = kind.kind
        if old is None:
            self.finish_new(new)
        else:
            omd = old.get("metadata", {})
            for f in ("uid", "creationTimestamp", "generation",
                      "resourceVersion"):
                if f in omd:
                    md[f] = omd[f]
            mf = omd.get("managedFields")
            if mf is not None:
                md["managedFields"] = copy.deepcopy(mf)
            else:
                md.pop("managedFields", None)

            def body(o):
                return {k: v for k, v in o.items()
                        if k not in ("metadata", "status", "apiVersion",
                                     "kind")}
            if new == old:
                return new, False
            if body(new) != body(old):
                md["generation"] = int(omd.get("generation", 1)) + 1
            md["resourceVersion"] = self.next_rv()
        if manager:
            mfl = [e for e in md.get("managedFields", [])
                   if not (e.get("manager") == manager and
                           e.get("operation") == operation)]
            mfl.append({"manager": manager, "operation": operation,
                        "apiVersion": kind.gv, "time": now_rfc3339(),
                        "fieldsType": "FieldsV1", "fieldsV1": {}})
            md["managedFields"] = mfl
        self.objects[key] = new
        self.cvo_hook(key, old, new)
        if kind.group == "apiextensions.k8s.io" and \
                kind.plural == "customresourcedefinitions":
            self.register_crd(new)
        self.save_state()
        return new, True

    def apply(self, kind, ns, name, cfg, manager, force, subresource):
        if not isinstance(cfg, dict):
            raise ApiError(400, "BadRequest", "apply body must be an object")
        if not manager:
            raise ApiError(400, "BadRequest",
                           "PATCH with apply requires fieldManager")
        cmd = cfg.get("metadata") or {}
        if cmd.get("name") not in (None, name):
            raise ApiError(400, "BadRequest",
                           "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (cmd.get("name"), name))
        if cfg.get("kind") not in (None, kind.kind) or \
                cfg.get("apiVersion") not in (None, kind.gv):
            raise ApiError(400, "BadRequest", "apiVersion/kind %s/%s do not "
                           "match the URL (%s %s)" % (
                               cfg.get("apiVersion"), cfg.get("kind"),
                               kind.gv, kind.kind))
        self.check_namespace(kind, ns)
        key = (kind.group, kind.plural, ns if kind.namespaced else "", name)
        cfg = strip_meta(cfg)
        manifest_status = cfg.get("status")
        if subresource == "status":
            cfg = {"status": cfg.get("status", {})}
        elif kind.status:
            cfg.pop("status", None)
        old = self.objects.get(key)
        if old is None and subresource == "status":
            raise ApiError(404, "NotFound", '%s.%s "%s" not found' % (
                kind.plural, kind.group, name))
        applied = self.applied.setdefault(key, {})
        prev = applied.get(manager + "/" + (subresource or ""), {})
        if old is not None and not force:
            for path, val in leaf_paths(cfg):
                if path in (("apiVersion",), ("kind",)):
                    continue
                found, cur = get_path(old, path)
                if not found or cur == val:
                    continue
                for other, ocfg in applied.items():
                    if other.split("/")[0] == manager:
                        continue
                    if get_path(ocfg, path)[0]:
                        raise ApiError(409, "Conflict",
                                       'Apply failed with 1 conflict: '
                                       'conflict with "%s": .%s' % (
                                           other.split("/")[0],
                                           ".".join(path)))
        new = copy.deepcopy(old) if old is not None else {}
        # Fields this manager applied before and no longer applies go away.
        cfg_paths = set(p for p, _ in leaf_paths(cfg))
        for path, _ in leaf_paths(prev):
            if path in cfg_paths or path[:1] in (("apiVersion",), ("kind",)):
                continue
            if not any(path[:len(c)] == c or c[:len(path)] == path
                       for c in cfg_paths):
                del_path(new, path)
        apply_merge(new, cfg)
        if force:
            for other in list(applied):
                if other.split("/")[0] == manager:
                    continue
                for path, _ in leaf_paths(cfg):
                    del_path(applied[other], path)
        applied[manager + "/" + (subresource or "")] = cfg
        created = old is None
        obj, _ = self.store(key, kind, old, new, manager, "Apply")
        if kind.plural == "clusteroperators" and kind.group == \
                "config.openshift.io" and subresource is None:
            self.co_applied(name, manifest_status)
        if subresource is None:
            self.sim_applied(kind, key)
        return obj, created

    def merge(self, kind, ns, name, patch, subresource, manager):
        self.check_namespace(kind, ns)
        key = (kind.group, kind.plural, ns if kind.namespaced else "", name)
        old = self.objects.get(key)
        if old is None:
            raise ApiError(404, "NotFound", '%s "%s" not found' % (
                kind.plural, name))
        if not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "patch must be an object")
        patch = strip_meta(patch)
        if subresource == "status":
            patch = {"status": patch.get("status", {})}
        elif kind.status:
            patch.pop("status", None)
        new = merge_patch(old, patch)
        obj, _ = self.store(key, kind, old, new, manager, "Update")
        return obj

    def put(self, kind, ns, name, body, subresource, manager, create):
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "body must be an object")
        self.check_namespace(kind, ns)
        key = (kind.group, kind.plural, ns if kind.namespaced else "", name)
        old = self.objects.get(key)
        bmd = body.get("metadata") or {}
        if create and old is not None:
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (
                kind.plural, name))
        if old is None and subresource == "status":
            raise ApiError(404, "NotFound", '%s "%s" not found' % (
                kind.plural, name))
        if old is not None and bmd.get("resourceVersion") and \
                bmd.get("resourceVersion") != \
                old["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict",
                           'Operation cannot be fulfilled on %s "%s": the '
                           'object has been modified; please apply your '
                           'changes to the latest version and try again'
                           % (kind.plural, name))
        body = strip_meta(body)
        if subresource == "status":
            new = copy.deepcopy(old)
            new["status"] = body.get("status", {})
        else:
            new = body
            if kind.status:
                if old is not None and "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                elif old is not None or not create:
                    new.pop("status", None)
        obj, _ = self.store(key, kind, old, new, manager,
                            "Update")
        return obj, old is None

    def delete(self, kind, ns, name):
        key = (kind.group, kind.plural, ns if kind.namespaced else "", name)
        old = self.objects.get(key)
        if old is None:
            raise ApiError(404, "NotFound", '%s "%s" not found' % (
                kind.plural, name))
        self.drop(key)
        if key[1] == "namespaces" and key[0] == "":
            for k in list(self.objects):
                if k[2] == name:
                    self.drop(k)
        if key[1] == "customresourcedefinitions":
            self.unregister_crd(old)
        self.save_state()
        return old

    def list(self, kind, ns, selector):
        items = []
        for key in sorted(self.objects):
            if key[0] != kind.group or key[1] != kind.plural:
                continue
            if ns and key[2] != ns:
                continue
            obj = self.objects[key]
            if selector and not match_selector(obj, selector):
                continue
            items.append(obj)
        return {"apiVersion": kind.gv, "kind": kind.kind + "List",
                "metadata": {"resourceVersion": str(self.rv)},
                "items": items}

    # -- ClusterOperator simulation -----------------------------------------

    def co_setting(self, name):
        s = dict(self.co_settings.get("*", {}))
        s.update(self.co_settings.get(name, {}))
        return s

    def co_applied(self, name, manifest_status):
        versions = None
        if isinstance(manifest_status, dict):
            versions = manifest_status.get("versions")
        if not isinstance(versions, list) or not versions:
            versions = [{"name": "operator", "version": DEFAULT_CO_VERSION}]
        self.co_targets[name] = copy.deepcopy(versions)
        self.save_state()
        self.schedule_co(name)

    def schedule_co(self, name):
        t = self.co_timers.pop(name, None)
        if t:
            t.cancel()
        s = self.co_setting(name)
        delay = float(s.get("delay", self.args.co_delay))
        self.co_timers[name] = self.clock.timer(delay, self.co_fire, (name,))

    def co_fire(self, name):
        with self.lock:
            self.co_timers.pop(name, None)
            target = self.co_targets.get(name)
            key = ("config.openshift.io", "clusteroperators", "", name)
            old = self.objects.get(key)
            if target is None or old is None:
                return
            kind = self.find_kind("config.openshift.io/v1", "ClusterOperator")
            s = self.co_setting(name)
            if s.get("version"):
                target = [{"name": v.get("name", "operator"),
                           "version": s["version"]} for v in target]
            new = copy.deepcopy(old)
            st = new.setdefault("status", {})
            if not isinstance(st, dict):
                st = new["status"] = {}
            ts = now_rfc3339()

            def cond(t, v, reason, msg=""):
                return {"type": t, "status": v, "reason": reason,
                        "message": msg, "lastTransitionTime": ts}
            if s.get("never"):
                st["conditions"] = [
                    cond("Available", "True", "AsExpected"),
                    cond("Progressing", "True", "SimulatedStuck",
                         "simulated: never reaches the version"),
                    cond("Degraded", "False", "AsExpected")]
            elif s.get("degraded"):
                msg = s["degraded"] if isinstance(s["degraded"], str) \
                    else "simulated degradation"
                st["conditions"] = [
                    cond("Available", "True", "AsExpected"),
                    cond("Progressing", "False", "AsExpected"),
                    cond("Degraded", "True", "SimulatedDegraded", msg)]
            else:
                st["conditions"] = [
                    cond("Available", "True", "AsExpected"),
                    cond("Progressing", "False", "AsExpected"),
                    cond("Degraded", "False", "AsExpected")]
                st["versions"] = copy.deepcopy(target)
                self.co_targets.pop(name, None)
            # Keep transition times stable when nothing else changed.
            oldst = old.get("status") or {}
            if isinstance(oldst, dict):
                oc = {c.get("type"): c for c in oldst.get("conditions") or []
                      if isinstance(c, dict)}
                for c in st["conditions"]:
                    p = oc.get(c["type"])
                    if p and p.get("status") == c["status"] and \
                            p.get("reason") == c["reason"]:
                        c["lastTransitionTime"] = p.get(
                            "lastTransitionTime", ts)
            self.store(key, kind, old, new, "kubeserver-operator", "Update")
            self.save_state()

    # -- CVO rules: CRD, Job, Deployment/DaemonSet status simulation --------

    def sim_steps(self, kind, ns, name):
        for k in ((kind.kind, ns, name), (kind.kind, "*", name),
                  (kind.kind, ns, "*"), (kind.kind, "*", "*")):
            if k in self.sim_settings:
                return copy.deepcopy(self.sim_settings[k]), True
        ts = now_rfc3339()
        if kind.group == "apiextensions.k8s.io" and \
                kind.plural == "customresourcedefinitions":
            conds = [{"type": t, "status": "True", "reason": r,
                      "message": m, "lastTransitionTime": ts}
                     for t, r, m in (
                         ("NamesAccepted", "NoConflicts",
                          "no conflicts found"),
                         ("Established", "InitialNamesAccepted",
                          "the initial names have been accepted"))]
            return [{"after": self.args.crd_delay,
                     "status": {"conditions": conds}}], False
        if kind.group == "batch" and kind.kind == "Job":
            return [{"after": 0, "status": {"active": 1}},
                    {"after": self.args.job_delay,
                     "status": {"succeeded": 1, "conditions": [
                         {"type": "Complete", "status": "True",
                          "lastTransitionTime": ts}]}}], False
        return None, False

    def crd_kinds(self, crd):
        spec = crd.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural")
        return [k for k in self.kinds if k.source == "crd" and
                k.group == spec.get("group", "") and k.plural == plural]

    @staticmethod
    def established(status):
        for c in (status or {}).get("conditions") or []:
            if isinstance(c, dict) and c.get("type") == "Established":
                return c.get("status") == "True"
        return False

    def sim_applied(self, kind, key):
        steps, _ = self.sim_steps(kind, key[2] or "*", key[3])
        if steps is None:
            return
        for t in self.sim_timers.pop(key, []):
            t.cancel()
        is_crd = kind.group == "apiextensions.k8s.io" and \
            kind.plural == "customresourcedefinitions"
        obj = self.objects.get(key)
        if is_crd and obj is not None and \
                not self.established(obj.get("status")):
            for k in self.crd_kinds(obj):
                k.hidden = True
        timers, at = [], 0.0
        for st in steps:
            at += float(st.get("after", 0))
            if at <= 0 and not timers:
                self.sim_fire(kind, key, st.get("status") or {})
                continue
            timers.append(self.clock.timer(
                at, self.sim_fire_locked,
                (kind, key, st.get("status") or {})))
        self.sim_timers[key] = timers

    def sim_fire_locked(self, kind, key, status):
        with self.lock:
            self.sim_fire(kind, key, status)

    def sim_fire(self, kind, key, status):
        old = self.objects.get(key)
        if old is None:
            return
        new = copy.deepcopy(old)
        new["status"] = copy.deepcopy(status)
        self.store(key, kind, old, new, "kubeserver-controller", "Update")
        if kind.group == "apiextensions.k8s.io" and \
                kind.plural == "customresourcedefinitions" and \
                self.established(status):
            for k in self.crd_kinds(new):
                k.hidden = False

    # -- faults and log ------------------------------------------------------

    def pick_fault(self, method, path, body=b""):
        with self.lock:
            for f in self.faults:
                if f["method"] not in ("*", method):
                    continue
                if not f["re"].search(path):
                    continue
                if f.get("body_re") is not None and not f["body_re"].search(
                        body.decode("utf-8", "replace")):
                    continue
                if f["times"] and f["used"] >= f["times"]:
                    continue
                f["seen"] += 1
                if f["seen"] <= f["after"]:
                    continue
                f["used"] += 1
                return f
        return None

    def log_start(self, method, path, query, manager, ctype):
        with self.lock:
            self.log_seq += 1
            ent = {"seq": self.log_seq, "time": self.clock.stamp(), "end": None,
                   "method": method, "path": path, "query": query,
                   "status": None, "fault": None, "field_manager": manager,
                   "content_type": ctype}
            self.log.append(ent)
            return ent

    # -- a simulated cluster-version-operator (airlock update --via-cvo) ----
    CV_KEY = ("config.openshift.io", "clusterversions", "", "version")

    def cvo_hook(self, key, old, new):
        """A changed spec.desiredUpdate starts the simulated CVO."""
        if key != self.CV_KEY or not self.cvo_sim:
            return
        du = (new.get("spec") or {}).get("desiredUpdate")
        odu = ((old or {}).get("spec") or {}).get("desiredUpdate")
        if not du or du == odu:
            return
        t = threading.Timer(0.02, self.cvo_accept, (copy.deepcopy(du),))
        t.daemon = True
        t.start()

    def cvo_status(self, fn):
        """Change the ClusterVersion status with fn(status), as the CVO."""
        old = self.objects.get(self.CV_KEY)
        if old is None:
            return
        new = copy.deepcopy(old)
        st = new.setdefault("status", {})
        fn(st)
        kind = self.find_kind("config.openshift.io/v1", "ClusterVersion")
        self.store(self.CV_KEY, kind, old, new, "cluster-version-operator",
                   "Update")

    @staticmethod
    def cvo_cond(st, ctype, status, reason, msg):
        conds = [c for c in st.get("conditions") or []
                 if c.get("type") != ctype]
        conds.append({"type": ctype, "status": status, "reason": reason,
                      "message": msg, "lastTransitionTime": now_rfc3339()})
        st["conditions"] = conds

    def cvo_current(self, du):
        cv = self.objects.get(self.CV_KEY) or {}
        return (cv.get("spec") or {}).get("desiredUpdate") == du

    def cvo_signed(self, digest):
        """A signature ConfigMap for digest, as the CVO's verifier reads
        them (the simulation checks presence, not the OpenPGP signature)."""
        want = digest.replace(":", "-") + "-"
        for (g, plural, ns, _), o in self.objects.items():
            if g or plural != "configmaps" or ns != "openshift-config-managed":
                continue
            labels = (o.get("metadata") or {}).get("labels") or {}
            if "release.openshift.io/verification-signatures" not in labels:
                continue
            if any(k.startswith(want) for k in (o.get("binaryData") or {})):
                return True
        return False

    def cvo_accept(self, du):
        with self.lock:
            s = self.cvo_sim
            if not s or not self.cvo_current(du):
                return
            image = du.get("image", "")
            version = du.get("version", "")
            digest = image.split("@", 1)[1] if "@" in image else ""
            if not du.get("force") and (s.get("untrusted") or
                                        not self.cvo_signed(digest)):
                msg = ('Retrieving payload failed version="%s" image="%s" '
                       'failure=The update cannot be verified: unable to '
                       'verify %s against keyrings: '
                       'verifier-public-key-redhat' % (version, image,
                                                       digest))
                self.cvo_status(lambda st: self.cvo_cond(
                    st, "ReleaseAccepted", "False", "RetrievePayload", msg))
                return
            now = now_rfc3339()

            def accept(st):
                hist = st.setdefault("history", [])
                if hist and hist[0].get("state") == "Partial" and \
                        hist[0].get("image") != image and \
                        hist[0].get("completionTime") is None:
                    hist[0]["completionTime"] = now
                if not hist or hist[0].get("image") != image:
                    hist.insert(0, {"state": "Partial", "version": version,
                                    "image": image, "startedTime": now,
                                    "completionTime": None,
                                    "verified": not du.get("force")})
                st["desired"] = {"version": version, "image": image}
                self.cvo_cond(st, "ReleaseAccepted", "True", "PayloadLoaded",
                              'Payload loaded version="%s" image="%s" '
                              'architecture="amd64"' % (version, image))
                self.cvo_cond(st, "Progressing", "True", "",
                              "Working towards %s" % version)
                self.cvo_cond(st, "Failing", "False", "", "")
            self.cvo_status(accept)
            t = threading.Timer(float(s.get("delay", 0.2)), self.cvo_finish,
                                (copy.deepcopy(du),))
            t.daemon = True
            t.start()

    def cvo_finish(self, du):
        with self.lock:
            s = self.cvo_sim
            if not s or not self.cvo_current(du) or s.get("never"):
                return
            version = du.get("version", "")
            image = du.get("image", "")
            fail = s.get("fail")

            def finish(st):
                if fail:
                    self.cvo_cond(st, "Failing", "True",
                                  fail.get("reason", "ClusterOperatorNotAvailable"),
                                  fail.get("message", ""))
                    self.cvo_cond(st, "Progressing", "True",
                                  fail.get("reason", "ClusterOperatorNotAvailable"),
                                  "Unable to apply %s: %s" % (
                                      version, fail.get("message", "")))
                    return
                for h in st.get("history") or []:
                    if h.get("image") == image:
                        h["state"] = "Completed"
                        h["completionTime"] = now_rfc3339()
                        break
                self.cvo_cond(st, "Available", "True", "",
                              "Done applying %s" % version)
                self.cvo_cond(st, "Progressing", "False", "",
                              "Cluster version is %s" % version)
                self.cvo_cond(st, "Failing", "False", "", "")
            self.cvo_status(finish)

    def reset(self):
        with self.lock:
            for t in self.co_timers.values():
                t.cancel()
            self.co_timers = {}
            self.co_targets = {}
            self.co_settings = {}
            for ts in self.sim_timers.values():
                for t in ts:
                    t.cancel()
            self.sim_timers = {}
            self.sim_settings = {}
            self.cvo_sim = None
            self.objects = {}
            self.applied = {}
            self.kinds = [k for k in self.kinds if k.source != "crd"]
            self.faults = []
            self.log = []
            self.log_seq = 0
            self.create_start_namespaces()
            self.save_state()


def status_body(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason,
            "code": code}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kubeserver/1"
    # Headers and body go out in two writes: without TCP_NODELAY, Nagle
    # plus the client's delayed ACK cost ~40 ms per request.
    disable_nagle_algorithm = True
    cluster = None
    verbose = False

    def log_message(self, fmt, *args):
        if self.verbose:
            sys.stderr.write("kubeserver: " + (fmt % args) + "\n")

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    break
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n",
                                                            b""):
                        pass
                    break
                if len(out) + size > MAX_BODY:
                    raise ApiError(413, "RequestEntityTooLarge",
                                   "request body too large")
                out += self.rfile.read(size)
                self.rfile.readline(16)
            return bytes(out)
        n = int(self.headers.get("Content-Length", "0") or "0")
        if n > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge",
                           "request body too large")
        return self.rfile.read(n) if n > 0 else b""

    def send_json(self, code, obj, headers=None):
        body = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers or []:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return code

    def wait_for_close(self, limit=300.0):
        self.close_connection = True
        self.connection.settimeout(1.0)
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                if not self.connection.recv(65536):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def rst(self):
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        except OSError:
            pass
        for f in (self.wfile, self.rfile, self.connection):
            try:
                f.close()
            except OSError:
                pass

    def do_GET(self):
        self.dispatch()

    do_HEAD = do_GET
    do_PUT = do_GET
    do_POST = do_GET
    do_PATCH = do_GET
    do_DELETE = do_GET

    def dispatch(self):
        self.cluster.clock.advance(self.headers.get("X-Airlock-Test-Clock"))
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        query = urllib.parse.parse_qs(u.query)
        if path.startswith("/_control/"):
            try:
                body = self.read_body()
                self.control(path, query, body)
            except ApiError as e:
                self.send_json(e.code, status_body(e.code, e.reason,
                                                   e.message))
            except (ValueError, KeyError, TypeError, re.error) as e:
                self.send_json(400, status_body(400, "BadRequest", str(e)))
            return
        c = self.cluster
        manager = (query.get("fieldManager") or [None])[0]
        ent = c.log_start(self.command, path, u.query, manager,
                          self.headers.get("Content-Type"))
        code = None
        try:
            body = self.read_body()
            f = c.pick_fault(self.command, path, body)
            if f is not None:
                ent["fault"] = f["id"]
                if f.get("latency_ms"):
                    time.sleep(f["latency_ms"] / 1000.0)
                if f.get("hang"):
                    self.wait_for_close()
                    return
                if f.get("reset"):
                    self.rst()
                    return
                if f.get("status"):
                    hdrs = []
                    if f.get("retry_after") is not None:
                        hdrs.append(("Retry-After", str(f["retry_after"])))
                    code = self.send_json(f["status"], status_body(
                        f["status"], "InjectedFault",
                        "injected fault %d" % f["id"]), hdrs)
                    return
            self.check_auth()
            code = self.api(path, query, body)
        except ApiError as e:
            code = self.send_json(e.code, status_body(e.code, e.reason,
                                                      e.message), e.headers)
        except (ValueError, KeyError, TypeError) as e:
            code = self.send_json(500, status_body(500, "InternalError",
                                                   "kubeserver: %r" % (e,)))
        finally:
            with c.lock:
                ent["status"] = code
                ent["end"] = c.clock.stamp() if code is not None else None

    def check_auth(self):
        token = self.server.token
        if not token:
            return
        if self.server.client_ca and self.client_cert_ok():
            return
        if self.headers.get("Authorization", "") == "Bearer " + token:
            return
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def client_cert_ok(self):
        try:
            return bool(self.connection.getpeercert())
        except (AttributeError, ValueError):
            return False

    # -- control -------------------------------------------------------------

    def control(self, path, query, body):
        c = self.cluster
        data = json.loads(body.decode() or "{}") if body else {}
        if path == "/_control/health":
            self.send_json(200, {"ok": True})
        elif path == "/_control/fault" and self.command == "POST":
            with c.lock:
                c.fault_seq += 1
                f = {"id": c.fault_seq, "path": data["path"],
                     "re": re.compile(data["path"]),
                     "method": data.get("method", "*").upper(),
                     "times": int(data.get("times", 0) or 0),
                     "after": int(data.get("after", 0) or 0),
                     "status": data.get("status"),
                     "retry_after": data.get("retry_after"),
                     "latency_ms": data.get("latency_ms"),
                     "hang": bool(data.get("hang")),
                     "reset": bool(data.get("reset")),
                     "body_re": re.compile(data["body"])
                     if data.get("body") else None,
                     "used": 0, "seen": 0}
                c.faults.append(f)
            self.send_json(200, {"id": f["id"]})
        elif path == "/_control/faults/clear" and self.command == "POST":
            with c.lock:
                c.faults = []
            self.send_json(200, {"ok": True})
        elif path == "/_control/log" and self.command == "GET":
            since = int((query.get("since") or ["0"])[0])
            with c.lock:
                out = [dict(e) for e in c.log if e["seq"] > since]
            self.send_json(200, {"requests": out})
        elif path == "/_control/log/clear" and self.command == "POST":
            with c.lock:
                c.log = []
            self.send_json(200, {"ok": True})
        elif path == "/_control/objects" and self.command == "GET":
            with c.lock:
                items = [copy.deepcopy(o) for o in c.objects.values()]
            items.sort(key=lambda o: (
                o.get("apiVersion", ""), o.get("kind", ""),
                o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            self.send_json(200, {"items": items})
        elif path == "/_control/objects" and self.command == "POST":
            obj = data["object"]
            with c.lock:
                kind = c.find_kind(obj["apiVersion"], obj["kind"])
                if kind is None:
                    raise ApiError(404, "NotFound", "no kind %s in %s" % (
                        obj["kind"], obj["apiVersion"]))
                md = obj["metadata"]
                key = (kind.group, kind.plural,
                       md.get("namespace", "") if kind.namespaced else "",
                       md["name"])
                obj = copy.deepcopy(obj)
                c.finish_new(obj)
                c.objects[key] = obj
                if kind.plural == "customresourcedefinitions":
                    c.register_crd(obj)
                c.save_state()
            self.send_json(200, obj)
        elif path == "/_control/kinds" and self.command == "POST":
            with c.lock:
                c.add_kinds(data["kinds"], "control")
            self.send_json(200, {"ok": True})
        elif path == "/_control/operator" and self.command == "POST":
            name = data.get("name", "*")
            with c.lock:
                if data.get("clear"):
                    c.co_settings.pop(name, None)
                else:
                    s = c.co_settings.setdefault(name, {})
                    for k in ("delay", "version", "never", "degraded"):
                        if k in data:
                            s[k] = data[k]
                for n in list(c.co_targets):
                    if name in ("*", n):
                        c.schedule_co(n)
            self.send_json(200, {"ok": True})
        elif path == "/_control/status-sim" and self.command == "POST":
            k = (data["kind"], data.get("namespace", "*"),
                 data.get("name", "*"))
            with c.lock:
                if data.get("clear"):
                    c.sim_settings.pop(k, None)
                else:
                    c.sim_settings[k] = list(data.get("steps") or [])
            self.send_json(200, {"ok": True})
        elif path == "/_control/cvo" and self.command == "POST":
            with c.lock:
                c.cvo_sim = dict(data) if data.get("enabled", True) else None
            self.send_json(200, {"ok": True})
        elif path == "/_control/reset" and self.command == "POST":
            c.reset()
            self.send_json(200, {"ok": True})
        else:
            raise ApiError(404, "NotFound", "no control endpoint %s %s" % (
                self.command, path))

    # -- API -----------------------------------------------------------------

    def discovery_list(self, group, version):
        c = self.cluster
        res = []
        for k in c.kinds:
            if k.group != group or k.version != version or \
                    getattr(k, "hidden", False):
                continue
            verbs = ["create", "delete", "get", "list", "patch", "update"]
            ent = {"name": k.plural, "singularName": k.kind.lower(),
                   "namespaced": k.namespaced, "kind": k.kind,
                   "verbs": verbs}
            if k.source == "builtin" and k.plural in SHORT_NAMES:
                ent["shortNames"] = SHORT_NAMES[k.plural]
            res.append(ent)
            if k.status:
                res.append({"name": k.plural + "/status", "singularName": "",
                            "namespaced": k.namespaced, "kind": k.kind,
                            "verbs": ["get", "patch", "update"]})
        if not res:
            return None
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": gv_of(group, version), "resources": res}

    def api(self, path, query, body):
        c = self.cluster
        m = self.command
        if path in ("/healthz", "/readyz", "/livez"):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            return 200
        if path == "/version":
            return self.send_json(200, {
                "major": "1", "minor": "32", "gitVersion": "v1.32.0-kubeserver",
                "platform": "linux/amd64"})
        parts = [p for p in path.split("/") if p]
        with c.lock:
            if parts == ["api"]:
                return self.send_json(200, {
                    "kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0",
                         "serverAddress": "127.0.0.1"}]})
            if parts == ["apis"]:
                groups = {}
                for k in c.kinds:
                    if k.group == "":
                        continue
                    groups.setdefault(k.group, [])
                    if k.version not in groups[k.group]:
                        groups[k.group].append(k.version)
                out = []
                for g in sorted(groups):
                    vs = [{"groupVersion": gv_of(g, v), "version": v}
                          for v in groups[g]]
                    out.append({"name": g, "versions": vs,
                                "preferredVersion": vs[0]})
                return self.send_json(200, {"kind": "APIGroupList",
                                            "apiVersion": "v1",
                                            "groups": out})
            if len(parts) >= 2 and parts[0] == "api":
                group, version, rest = "", parts[1], parts[2:]
            elif len(parts) >= 3 and parts[0] == "apis":
                group, version, rest = parts[1], parts[2], parts[3:]
            elif len(parts) == 2 and parts[0] == "apis":
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            else:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            if not rest:
                if m != "GET":
                    raise ApiError(405, "MethodNotAllowed",
                                   "method not allowed")
                dl = self.discovery_list(group, version)
                if dl is None:
                    raise ApiError(404, "NotFound", "the server could not "
                                   "find the requested resource")
                return self.send_json(200, dl)
            ns = ""
            if len(rest) >= 3 and rest[0] == "namespaces":
                ns = rest[1]
                rest = rest[2:]
            if len(rest) > 3:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            kind = c.find_kind_plural(group, version, rest[0])
            if kind is None:
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            if ns and not kind.namespaced:
                raise ApiError(404, "NotFound", "%s is cluster-scoped" %
                               kind.kind)
            name = rest[1] if len(rest) >= 2 else None
            sub = rest[2] if len(rest) == 3 else None
            if sub is not None and (sub != "status" or not kind.status):
                raise ApiError(404, "NotFound", "the server could not find "
                               "the requested resource")
            return self.resource(kind, ns, name, sub, query, body)

    def parse_body(self, body):
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ApiError(415, "UnsupportedMediaType",
                           "kubeserver accepts JSON bodies only (a YAML "
                           "apply body is not supported)")

    def resource(self, kind, ns, name, sub, query, body):
        c = self.cluster
        m = self.command
        manager = (query.get("fieldManager") or [None])[0]
        if name is None:
            if m == "GET":
                sel = (query.get("labelSelector") or [""])[0]
                return self.send_json(200, c.list(kind, ns, sel))
            if m == "POST":
                obj = self.parse_body(body)
                n = ((obj or {}).get("metadata") or {}).get("name")
                if not n:
                    raise ApiError(400, "BadRequest",
                                   "metadata.name is required")
                o, _ = c.put(kind, ns, n, obj, None, manager, True)
                return self.send_json(201, o)
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        key = (kind.group, kind.plural, ns if kind.namespaced else "", name)
        if m == "GET":
            if kind.namespaced and not ns:
                raise ApiError(404, "NotFound", "namespace required")
            o = c.objects.get(key)
            if o is None:
                gr = kind.plural + ("." + kind.group if kind.group else "")
                raise ApiError(404, "NotFound", '%s "%s" not found' % (
                    gr, name))
            return self.send_json(200, o)
        if m == "DELETE":
            return self.send_json(200, c.delete(kind, ns, name))
        if m == "PUT":
            o, created = c.put(kind, ns, name, self.parse_body(body), sub,
                               manager, False)
            return self.send_json(201 if created else 200, o)
        if m == "PATCH":
            ctype = (self.headers.get("Content-Type") or "").split(";")[0]
            ctype = ctype.strip().lower()
            if ctype == "application/apply-patch+yaml":
                force = (query.get("force") or ["false"])[0] == "true"
                o, created = c.apply(kind, ns, name, self.parse_body(body),
                                     manager, force, sub)
                return self.send_json(201 if created else 200, o)
            if ctype in ("application/merge-patch+json",
                         "application/strategic-merge-patch+json"):
                return self.send_json(200, c.merge(
                    kind, ns, name, self.parse_body(body), sub, manager))
            raise ApiError(415, "UnsupportedMediaType",
                           "unsupported patch type %r" % ctype)
        raise ApiError(405, "MethodNotAllowed", "method not allowed")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    token = None
    client_ca = None
    tls = None

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.tls is not None:
            sock.settimeout(10)
            try:
                sock = self.tls.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                sock.close()
                raise
            sock.settimeout(None)
        return sock, addr


def main():
    ap = argparse.ArgumentParser(description="Kubernetes API test server")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--client-ca")
    ap.add_argument("--token")
    ap.add_argument("--state-file")
    ap.add_argument("--kinds")
    ap.add_argument("--co-delay", type=float, default=0.2)
    ap.add_argument("--crd-delay", type=float, default=0.0)
    ap.add_argument("--job-delay", type=float, default=0.2)
    ap.add_argument("--virtual-clock", action="store_true",
                    help="run timers on the clients' X-Airlock-Test-Clock")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.host not in LOOPBACK:
        sys.exit("kubeserver: refusing to bind non-loopback %s" % args.host)
    Handler.verbose = args.verbose
    Handler.cluster = Cluster(args)
    srv = Server((args.host, args.port), Handler)
    srv.token = args.token
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        if args.client_ca:
            ctx.load_verify_locations(args.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
            srv.client_ca = args.client_ca
        srv.tls = ctx
    port = srv.server_address[1]
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, args.port_file)

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    srv.server_close()


if __name__ == "__main__":
    main()
