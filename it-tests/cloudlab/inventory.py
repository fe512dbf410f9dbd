#!/usr/bin/env python3
"""Writes the Ansible inventory of deploy.yml: from a CloudLab manifest, or from a host list.

    inventory.py --manifest manifest.xml [--user NAME] [--key FILE] > inventory.yml
    inventory.py --host NAME=ADDRESS[/LAN_IP] ... [--user root] [--key FILE] > inventory.yml

The first node (node0 in the profile's manifest, the first --host) is the ResourceManager and
NameNode; the others are NodeManagers and DataNodes; a single node is both. Every host gets
ansible_host (where ssh reaches it), lan_ip (the address Hadoop's daemons use: the profile's LAN
on CloudLab) and tidal_dir (--install-dir, where "{host}" becomes the host's name: hosts that
share a file system need one each). The output is JSON, which Ansible reads as YAML.
"""

import argparse
import ipaddress
import json
import re
import sys
import xml.etree.ElementTree as ET

RSPEC = "{http://www.geni.net/resources/rspec/3}"


class InventoryError(Exception):
    pass


def node_order(name):
    """node2 before node10: the profile names nodes node0..nodeN-1."""
    m = re.fullmatch(r"(.*?)(\d+)", name)
    return (m.group(1), int(m.group(2))) if m else (name, -1)


def hosts_from_manifest(xml_text, user=None):
    """[(name, ssh address, ssh port, ssh user, LAN address)] of a CloudLab manifest RSpec."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        raise InventoryError(f"the manifest is not XML: {e}") from None
    if root.tag != RSPEC + "rspec" or root.get("type") != "manifest":
        raise InventoryError("not a manifest RSpec (want <rspec type=\"manifest\">; a request "
                             "RSpec has no hosts yet: download the manifest once the nodes are ready)")
    hosts = []
    for node in root.iter(RSPEC + "node"):
        name = node.get("client_id")
        logins = node.findall(f"{RSPEC}services/{RSPEC}login")
        if user is not None:
            logins = [l for l in logins if l.get("username") == user]
        if not logins:
            who = f" for user {user}" if user else ""
            raise InventoryError(f"node {name} has no ssh login{who} in the manifest")
        login = logins[0]
        ips = [ip.get("address") for ip in node.iter(RSPEC + "ip") if ip.get("type", "ipv4") == "ipv4"]
        if not ips:
            raise InventoryError(f"node {name} has no LAN address in the manifest")
        hosts.append((name, login.get("hostname"), int(login.get("port", "22")),
                      login.get("username"), ips[0]))
    if not hosts:
        raise InventoryError("the manifest has no nodes")
    return sorted(hosts, key=lambda h: node_order(h[0]))


def hosts_from_args(specs, user, port):
    hosts = []
    for spec in specs:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9.-]*)=([^/\s]+)(?:/(\S+))?", spec)
        if not m:
            raise InventoryError(f"--host takes NAME=ADDRESS[/LAN_IP], not '{spec}'")
        name, address, lan = m.group(1), m.group(2), m.group(3) or m.group(2)
        hosts.append((name, address, port, user, lan))
    return hosts


def inventory(hosts, install_dir, key=None):
    names = [h[0] for h in hosts]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InventoryError(f"host names must be unique: {', '.join(sorted(dup))}")
    for name, _, _, _, lan in hosts:
        try:
            ipaddress.IPv4Address(lan)
        except ValueError:
            raise InventoryError(f"host {name}: LAN address '{lan}' is not an IPv4 address") from None
    all_hosts = {}
    for name, address, port, user, lan in hosts:
        v = {"ansible_host": address, "ansible_port": port, "lan_ip": lan,
             "tidal_dir": install_dir.replace("{host}", name)}
        if user:
            v["ansible_user"] = user
        all_hosts[name] = v
    workers = names[1:] or names[:1]
    group_vars = {"ansible_ssh_private_key_file": key} if key else {}
    return {"all": {"hosts": all_hosts, "vars": group_vars, "children": {
        "resourcemanager": {"hosts": {names[0]: {}}},
        "workers": {"hosts": {n: {} for n in workers}}}}}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--manifest", help="a CloudLab manifest RSpec (XML)")
    src.add_argument("--host", action="append", metavar="NAME=ADDRESS[/LAN_IP]")
    p.add_argument("--user", help="ssh user (manifest: pick this user's login)")
    p.add_argument("--key", help="ssh private key file")
    p.add_argument("--port", type=int, default=22, help="ssh port of --host hosts")
    p.add_argument("--install-dir", default="/opt/tidal",
                   help='where each host keeps Hadoop and its data; "{host}" is the host name')
    a = p.parse_args(argv)
    try:
        if a.manifest:
            with open(a.manifest, encoding="utf-8") as f:
                hosts = hosts_from_manifest(f.read(), a.user)
        else:
            hosts = hosts_from_args(a.host, a.user, a.port)
        inv = inventory(hosts, a.install_dir, a.key)
    except (InventoryError, OSError) as e:
        sys.exit(f"inventory.py: {e}")
    json.dump(inv, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
