#!/usr/bin/env python3
# crdcheck.py: check Kubernetes resources (YAML) against a CRD's openAPIV3Schema, structurally (types, required, unknown fields, minimum/maximum, enum, pattern, int32).
"""usage: crdcheck.py CRD.yaml RESOURCE.yaml...

Every document of each RESOURCE file must be of the CRD's group and kind,
name a served version, and match that version's schema. Exit 0 when all
match, 1 with one line per problem otherwise, 2 on usage errors."""
import re
import sys

import yaml

TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def check(schema, value, path, errs):
    t = schema.get("type")
    if t == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            errs.append(f"{path}: want an integer, got {value!r}")
            return
        if schema.get("format") == "int32" and not -2**31 <= value < 2**31:
            errs.append(f"{path}: {value} is not an int32")
    elif t == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errs.append(f"{path}: want a number, got {value!r}")
            return
    elif t in TYPES:
        if not isinstance(value, TYPES[t]):
            errs.append(f"{path}: want {t}, got {type(value).__name__}")
            return
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errs.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if "maximum" in schema and isinstance(value, (int, float)) and value > schema["maximum"]:
        errs.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errs.append(f"{path}: {value!r} does not match {schema['pattern']!r}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(f"{path}: shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errs.append(f"{path}: longer than {schema['maxLength']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for r in schema.get("required", []):
            if r not in value:
                errs.append(f"{path}: required field {r!r} is missing")
        for k, v in value.items():
            if k in props:
                check(props[k], v, f"{path}.{k}", errs)
            elif isinstance(schema.get("additionalProperties"), dict):
                check(schema["additionalProperties"], v, f"{path}.{k}", errs)
            elif not schema.get("x-kubernetes-preserve-unknown-fields") and \
                    (props or schema.get("additionalProperties") is False):
                errs.append(f"{path}.{k}: not in the schema")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            check(schema["items"], v, f"{path}[{i}]", errs)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        crd = [d for d in yaml.safe_load_all(f) if d][0]
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    versions = {v["name"]: v for v in spec["versions"] if v.get("served")}
    errs = []
    ndocs = 0
    for p in argv[2:]:
        with open(p) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        for n, doc in enumerate(docs):
            ndocs += 1
            where = f"{p}[{n}]"
            api = doc.get("apiVersion", "") if isinstance(doc, dict) else ""
            g, _, ver = api.rpartition("/")
            if g != group or doc.get("kind") != kind:
                errs.append(f"{where}: {api} {doc.get('kind')} is not {group} {kind}")
                continue
            if ver not in versions:
                errs.append(f"{where}: version {ver!r} is not served by the CRD")
                continue
            check(versions[ver]["schema"]["openAPIV3Schema"], doc, where, errs)
    for e in errs:
        print(e)
    if ndocs == 0:
        print("no documents")
        return 1
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
